package jobs_test

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"

	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// benchArgs is about the size of a top-up notification's args (fifteen members).
type benchArgs struct {
	Ref, Event, Subscriber, Product, Amount, Currency, Status, Carrier string
	Invoice, Source, User, Email, Name, Reason, At                     string
}

func (benchArgs) Kind() string { return "bench" }

// BenchmarkInsertTx measures InsertTx's own row insert (the path every job of the services
// takes after the first of its kind), 100 jobs per transaction so that the commit's fsync does
// not hide the statement's cost; "arg-index" with the index of WithArgIndex on a member that
// holds a UUIDv7, as the top-up service's transaction_id.
func BenchmarkInsertTx(b *testing.B) {
	for _, name := range []string{"sqlite", "sqlite/arg-index", "postgres", "postgres/arg-index"} {
		b.Run(name, func(b *testing.B) {
			engine, index, _ := strings.Cut(name, "/")
			db := storagetest.Fresh(b, engine).DB
			var opts []jobs.MigrateOption
			if index != "" {
				opts = append(opts, jobs.WithArgIndex("Ref"))
			}
			if err := jobs.Migrate(b.Context(), db, opts...); err != nil {
				b.Fatal(err)
			}
			q, err := jobs.New(db, nil, jobs.Config{Logger: quietLogger()})
			if err != nil {
				b.Fatal(err)
			}
			args := benchArgs{Ref: "REF", Event: "recharge-success", Subscriber: "0991234567", Product: "RECCARRIER3",
				Amount: "3.00", Currency: "USD", Status: "success", Carrier: "CARRIER-TX-0000001", Invoice: "001-002-000000123",
				Source: "erp", User: "cashier@example.com", Email: "client@example.com", Name: "Cliente de Prueba",
				Reason: "", At: "2026-11-27T21:00:00.000Z"}
			insert := func(n int) {
				err := db.RunInTx(b.Context(), nil, func(ctx context.Context, tx bun.Tx) error {
					for range n {
						args.Ref = uuid.Must(uuid.NewV7()).String()
						if err := q.InsertTx(ctx, tx, args, nil); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			insert(1) // the first of its kind goes through River's own insert
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += 100 {
				insert(min(100, b.N-done))
			}
		})
	}
}

// BenchmarkCompleteSQLite measures what River's batch completer does on SQLite for each job it
// completes (riversqlite has no batch statement: one UPDATE ... RETURNING per job, with
// arguments), 50 jobs per batch, on storage.Open's connection, which keeps such statements
// compiled, and on a plain modernc connection, which compiles them at every execution.
func BenchmarkCompleteSQLite(b *testing.B) {
	for _, conn := range []string{"storage.Open", "plain"} {
		b.Run(conn, func(b *testing.B) {
			exec, add := sqliteQueue(b, conn)
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += 50 {
				b.StopTimer()
				ids := add(min(50, b.N-done), "running")
				now := time.Now().UTC()
				p := &riverdriver.JobSetStateIfRunningManyParams{ID: ids, Now: &now}
				for range ids {
					p.Attempt = append(p.Attempt, nil)
					p.ErrData = append(p.ErrData, nil)
					p.FinalizedAt = append(p.FinalizedAt, &now)
					p.MetadataDoMerge = append(p.MetadataDoMerge, false)
					p.MetadataUpdates = append(p.MetadataUpdates, nil)
					p.ScheduledAt = append(p.ScheduledAt, nil)
					p.State = append(p.State, rivertype.JobStateCompleted)
				}
				b.StartTimer()
				rows, err := exec.JobSetStateIfRunningMany(b.Context(), p)
				if err != nil || len(rows) != len(ids) {
					b.Fatalf("%d of %d jobs completed: %v", len(rows), len(ids), err)
				}
			}
		})
	}
}

// BenchmarkFetchSQLite measures River's fetch of available jobs on SQLite (one UPDATE ...
// RETURNING whose LIMIT is a parameter), five jobs per fetch as the notification queue's five
// workers take them, on storage.Open's connection and on a plain modernc connection.
func BenchmarkFetchSQLite(b *testing.B) {
	for _, conn := range []string{"storage.Open", "plain"} {
		b.Run(conn, func(b *testing.B) {
			exec, add := sqliteQueue(b, conn)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				add(5, "available")
				b.StartTimer()
				rows, err := exec.JobGetAvailable(b.Context(), &riverdriver.JobGetAvailableParams{
					ClientID: "bench", MaxAttemptedBy: 100, MaxToLock: 5, Queue: "default"})
				if err != nil || len(rows) != 5 {
					b.Fatalf("%d of 5 jobs fetched: %v", len(rows), err)
				}
			}
		})
	}
}

// sqliteQueue returns River's executor on a migrated SQLite database (storage.Open's, or a plain
// modernc connection to the same file when conn is "plain"), and add, which inserts n jobs
// through a Queue in one transaction, leaves them in state ("available" or "running"), and
// returns the ids of every job in that state.
func sqliteQueue(b *testing.B, conn string) (riverdriver.Executor, func(n int, state string) []int64) {
	db := storagetest.Fresh(b, "sqlite").DB
	if conn == "plain" {
		var dsn string
		if err := db.NewRaw("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(b.Context(), &dsn); err != nil {
			b.Fatal(err)
		}
		sqldb, err := sql.Open("sqlite", "file:"+dsn+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
		if err != nil {
			b.Fatal(err)
		}
		sqldb.SetMaxOpenConns(1)
		db = bun.NewDB(sqldb, sqlitedialect.New())
		b.Cleanup(func() { _ = db.Close() })
	}
	if err := jobs.Migrate(b.Context(), db); err != nil {
		b.Fatal(err)
	}
	q, err := jobs.New(db, nil, jobs.Config{Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	add := func(n int, state string) []int64 {
		var ids []int64
		err := db.RunInTx(b.Context(), nil, func(ctx context.Context, tx bun.Tx) error {
			for i := range n {
				if err := q.InsertTx(ctx, tx, benchArgs{Ref: strconv.Itoa(i)}, nil); err != nil {
					return err
				}
			}
			if state == "running" {
				if _, err := tx.ExecContext(ctx, "UPDATE river_job SET state = 'running', attempt = 1, attempted_at = CURRENT_TIMESTAMP WHERE state = 'available'"); err != nil {
					return err
				}
			}
			return tx.NewRaw("SELECT id FROM river_job WHERE state = ?", state).Scan(ctx, &ids)
		})
		if err != nil {
			b.Fatal(err)
		}
		return ids
	}
	return riversqlite.New(db.DB).GetExecutor(), add
}
