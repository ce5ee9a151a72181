package storage_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

var testMigrations = storage.NewMigrations(
	storage.Migration{
		Name: "20260101000001_create_items",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `CREATE TABLE items (
				id $ID,
				code VARCHAR(20) NOT NULL UNIQUE,
				estado VARCHAR(30) NOT NULL,
				amount $DECIMAL(18,2),
				payload $JSON,
				created_at $TIMESTAMP NOT NULL
			)`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `DROP TABLE items`)
		},
	},
	storage.Migration{
		Name: "20260101000002_index_items",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `CREATE INDEX items_estado_idx ON items (estado)`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `DROP INDEX items_estado_idx`)
		},
	},
)

func tableExists(t *testing.T, db *bun.DB, table string) bool {
	t.Helper()
	var n int
	var err error
	if storage.IsPostgres(db) {
		err = db.QueryRowContext(t.Context(), `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?`, table).Scan(&n)
	} else {
		err = db.QueryRowContext(t.Context(), `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&n)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func TestMigrateUpAndDown(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		applied, err := storage.Migrate(t.Context(), tg.DB, "test_migrations", testMigrations)
		if err != nil {
			t.Fatal(err)
		}
		if len(applied) != 2 {
			t.Fatalf("applied %v, want both migrations", applied)
		}
		if !tableExists(t, tg.DB, "items") {
			t.Fatal("items table missing after migrate")
		}
		again, err := storage.Migrate(t.Context(), tg.DB, "test_migrations", testMigrations)
		if err != nil || len(again) != 0 {
			t.Fatalf("second migrate applied %v, err %v; want nothing", again, err)
		}
		back, err := storage.Rollback(t.Context(), tg.DB, "test_migrations", testMigrations)
		if err != nil {
			t.Fatal(err)
		}
		if len(back) != 2 {
			t.Fatalf("rolled back %v, want both", back)
		}
		if tableExists(t, tg.DB, "items") {
			t.Fatal("items table still there after rollback")
		}
		if _, err := storage.Migrate(t.Context(), tg.DB, "test_migrations", testMigrations); err != nil {
			t.Fatalf("migrate after rollback: %v", err)
		}
		if !tableExists(t, tg.DB, "items") {
			t.Fatal("items table missing after re-migrate")
		}
	})
}

func TestConcurrentMigrateFromTwoInstances(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		other, err := storage.Open(t.Context(), tg.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, db := range []*bun.DB{tg.DB, other} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = storage.Migrate(t.Context(), db, "test_migrations", testMigrations)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if !tableExists(t, tg.DB, "items") {
			t.Fatal("items table missing")
		}
	})
}

type item struct {
	bun.BaseModel `bun:"table:items"`
	ID            int64     `bun:"id,pk,autoincrement"`
	Code          string    `bun:"code"`
	Estado        string    `bun:"estado"`
	CreatedAt     time.Time `bun:"created_at"`
}

func TestCompareAndSetHasExactlyOneWinner(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		if _, err := storage.Migrate(t.Context(), tg.DB, "test_migrations", testMigrations); err != nil {
			t.Fatal(err)
		}
		it := &item{Code: "A1", Estado: "AUTORIZADO", CreatedAt: time.Now().UTC()}
		if _, err := tg.DB.NewInsert().Model(it).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		const workers = 50
		var winners atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				won := false
				err := storage.RunInTx(t.Context(), tg.DB, func(ctx context.Context, tx bun.Tx) error {
					res, err := tx.NewUpdate().Model((*item)(nil)).Set("estado = ?", "CONSUMIDO").
						Where("id = ?", it.ID).Where("estado = ?", "AUTORIZADO").Exec(ctx)
					if err != nil {
						return err
					}
					n, err := res.RowsAffected()
					won = n == 1
					return err
				})
				if err != nil {
					t.Errorf("update: %v", err)
					return
				}
				// Counted after the commit: a win that did not commit is no win.
				if won {
					winners.Add(1)
				}
			}()
		}
		close(start)
		wg.Wait()
		if got := winners.Load(); got != 1 {
			t.Fatalf("%d winners, want exactly 1", got)
		}
		var after item
		if err := tg.DB.NewSelect().Model(&after).Where("id = ?", it.ID).Scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		if after.Estado != "CONSUMIDO" {
			t.Fatalf("estado after commit %q, want CONSUMIDO", after.Estado)
		}
	})
}

func TestIsUniqueViolation(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		if _, err := storage.Migrate(t.Context(), tg.DB, "test_migrations", testMigrations); err != nil {
			t.Fatal(err)
		}
		first := &item{Code: "DUP", Estado: "X", CreatedAt: time.Now().UTC()}
		if _, err := tg.DB.NewInsert().Model(first).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		_, err := tg.DB.NewInsert().Model(&item{Code: "DUP", Estado: "X", CreatedAt: time.Now().UTC()}).Exec(t.Context())
		if err == nil {
			t.Fatal("duplicate insert succeeded")
		}
		if !storage.IsUniqueViolation(err) {
			t.Fatalf("IsUniqueViolation(%v) = false", err)
		}
		// PostgreSQL names the inline UNIQUE items_code_key; SQLite names only its column.
		code := storage.Unique{Name: "items_code_key", Table: "items", Columns: []string{"code"}}
		if !code.Violated(err) {
			t.Fatalf("%+v.Violated(%v) = false", code, err)
		}
		other := storage.Unique{Name: "items_other_key", Table: "items", Columns: []string{"other"}}
		if other.Violated(err) {
			t.Fatalf("%+v.Violated(%v) = true for another constraint", other, err)
		}
		_, err = tg.DB.ExecContext(t.Context(), "INSERT INTO items (code) VALUES (NULL)")
		if err == nil || storage.IsUniqueViolation(err) {
			t.Fatalf("NOT NULL violation %v must not count as unique violation", err)
		}
	})
	if storage.IsUniqueViolation(errors.New("duplicate key")) || storage.IsUniqueViolation(nil) ||
		(storage.Unique{Name: "k", Table: "t", Columns: []string{"c"}}).Violated(errors.New("UNIQUE constraint failed: t.c")) {
		t.Fatal("plain errors are not unique violations")
	}
}

func TestRedactHidesPassword(t *testing.T) {
	cases := map[string]struct{ in, hidden string }{
		"postgres with password": {"postgres://app:s3cret@db:5432/x?sslmode=disable", "s3cret"},
		"no password":            {"postgres://app@db/x", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := storage.Redact(tc.in)
			if tc.hidden != "" && strings.Contains(got, tc.hidden) {
				t.Fatalf("Redact(%q) = %q still holds the password", tc.in, got)
			}
			if !strings.Contains(got, "@db") {
				t.Fatalf("Redact(%q) = %q lost the host", tc.in, got)
			}
		})
	}
}

func TestOpenErrorDoesNotLeakPassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := storage.Open(ctx, "postgres://app:topsecret@127.0.0.1:1/x?sslmode=disable&connect_timeout=1")
	if err == nil {
		t.Fatal("open of a closed port succeeded")
	}
	if strings.Contains(err.Error(), "topsecret") {
		t.Fatalf("error leaks the password: %v", err)
	}
}

func TestOpenCreatesSQLiteDirectory(t *testing.T) {
	dir := t.TempDir() + "/nested/data"
	db, err := storage.Open(t.Context(), dir+"/x.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Fatalf("journal_mode %q, want wal", mode)
	}
}

// A URL of another database is refused, not taken as a SQLite path: that created directories
// named after the URL, credentials included. The error names the scheme, never the value.
func TestOpenRefusesOtherSchemes(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, u := range []string{"mysql://app:topsecret@db/x", "MySQL://app:topsecret@db/x", "sqlserver://app:topsecret@db", "postgress://app:topsecret@db/x", "POSTGRES://app:topsecret@db/x", "postgres://app:topsecret@db:port/x"} {
		_, err := storage.Open(t.Context(), u)
		if err == nil {
			t.Fatalf("Open(%q) succeeded", u)
		}
		if strings.Contains(err.Error(), "topsecret") {
			t.Errorf("error leaks the password: %v", err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("refused URLs left files behind: %v", entries)
	}
}
