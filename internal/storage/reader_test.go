package storage_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

func countRows(ctx context.Context, db bun.IDB) (int, error) {
	var n int
	err := db.NewRaw("SELECT count(*) FROM r").Scan(ctx, &n)
	return n, err
}

// openR opens a SQLite file holding the table r, made by the statements given.
func openR(tb testing.TB, stmts ...string) *bun.DB {
	tb.Helper()
	db, err := storage.Open(tb.Context(), filepath.Join(tb.TempDir(), "r.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	for _, q := range stmts {
		if _, err := db.ExecContext(tb.Context(), q); err != nil {
			tb.Fatal(err)
		}
	}
	return db
}

// On SQLite a long read must not hold the writes back, nor wait for them: the one writer
// connection is busy with a transaction while the reader counts what was committed.
func TestReaderReadsBesideTheWriter(t *testing.T) {
	ctx := t.Context()
	db := openR(t, "CREATE TABLE r (id INTEGER PRIMARY KEY)", "INSERT INTO r (id) VALUES (1)")
	r := storage.Reader(db)
	if r == db {
		t.Fatal("Reader of a SQLite file is the writer's pool")
	}

	inTx, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- storage.RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, "INSERT INTO r (id) VALUES (2)"); err != nil {
				return err
			}
			close(inTx)
			<-release
			return nil
		})
	}()
	<-inTx
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	n, err := countRows(rctx, r)
	cancel()
	if err != nil {
		t.Fatalf("read while the writer holds a transaction: %v", err)
	}
	if n != 1 {
		t.Errorf("read beside the open transaction counted %d rows, want the 1 committed", n)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n, err := countRows(ctx, r); err != nil || n != 2 {
		t.Errorf("read after the commit: %d rows, %v; want 2", n, err)
	}
}

func TestReaderRefusesWrites(t *testing.T) {
	ctx := t.Context()
	db := openR(t, "CREATE TABLE r (id INTEGER PRIMARY KEY)")
	if _, err := storage.Reader(db).ExecContext(ctx, "INSERT INTO r (id) VALUES (1)"); err == nil {
		t.Fatal("a reader wrote")
	}
	if n, err := countRows(ctx, db); err != nil || n != 0 {
		t.Errorf("%d rows, %v; want none", n, err)
	}
}

// Where a pool of readers would add nothing (PostgreSQL's pool reads and writes side by side),
// could not see the data (a SQLite database in memory is one per connection) or would fail
// beside a write (a shared cache locks by table), Reader is db.
func TestReaderIsTheDatabaseWhereNoneIsNeeded(t *testing.T) {
	dir := t.TempDir()
	for _, u := range []string{
		":memory:",
		"file:" + filepath.Join(dir, "mem.db") + "?mode=memory",
		"file:" + filepath.Join(dir, "shared.db") + "?cache=shared",
		"file:/memdb.db?vfs=memdb",
	} {
		db, err := storage.Open(t.Context(), u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if storage.Reader(db) != db {
			t.Errorf("%s got readers", u)
		}
		db.Close()
	}
	if db := openR(t); storage.Reader(db) == db {
		t.Error("a SQLite file got no readers")
	}
	pg := storagetest.Postgres(t)
	if storage.Reader(pg.DB) != pg.DB {
		t.Error("PostgreSQL got readers")
	}
}

func TestCloseClosesTheReaders(t *testing.T) {
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	r := storage.Reader(db)
	if err := r.PingContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.PingContext(t.Context()); err == nil {
		t.Error("the readers answer after the database was closed")
	}
}

// BenchmarkWriteBesideReads commits one-row writes on SQLite while another goroutine reads the
// table whole, over and over (a count with LIKE '%x%' over 20,000 rows, as a client search
// does): through the writer's one connection, each write waits for the read in progress;
// through Reader, it does not.
func BenchmarkWriteBesideReads(b *testing.B) {
	for _, tc := range []struct {
		name string
		read func(*bun.DB) bun.IDB
	}{
		{"reads on the writer", func(db *bun.DB) bun.IDB { return db }},
		{"reads on Reader", func(db *bun.DB) bun.IDB { return storage.Reader(db) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := b.Context()
			db := openR(b, "CREATE TABLE r (id INTEGER PRIMARY KEY, v TEXT NOT NULL)",
				`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
				INSERT INTO r (v) SELECT 'client ' || i || ' of the registry' FROM n`)
			stop, stopped := make(chan struct{}), make(chan struct{})
			reads := 0
			go func() {
				defer close(stopped)
				for {
					select {
					case <-stop:
						return
					default:
					}
					var n int
					if err := tc.read(db).NewRaw("SELECT count(*) FROM r WHERE v LIKE '%x%'").Scan(ctx, &n); err != nil {
						b.Error(err)
						return
					}
					reads++
				}
			}()
			for b.Loop() {
				if err := storage.RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
					_, err := tx.ExecContext(ctx, "INSERT INTO r (v) VALUES ('new')")
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
			close(stop)
			<-stopped
			b.ReportMetric(float64(reads)/b.Elapsed().Seconds(), "reads/s")
		})
	}
}
