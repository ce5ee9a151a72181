// Package storagetest runs one test body against every database engine the services support.
//
// SQLite always runs, on a fresh file in t.TempDir(). PostgreSQL runs when TEST_DATABASE_URL is
// set, in a schema created for the test and dropped after it, so packages can run their tests in
// parallel on one database. Without TEST_DATABASE_URL the PostgreSQL variant is skipped with a
// message, unless REQUIRE_POSTGRES=1, which makes it fail instead (CI sets both).
package storagetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
)

// Target is one database a test body runs against.
type Target struct {
	// Name is "sqlite" or "postgres".
	Name string
	// URL opens the same database again with storage.Open, e.g. for a second service instance.
	URL string
	// DB is open for the duration of the test and closed after it.
	DB *bun.DB
}

// Run runs body once per engine as subtests named "sqlite" and "postgres".
func Run(t *testing.T, body func(t *testing.T, target Target)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { body(t, SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { body(t, Postgres(t)) })
}

// Fresh returns another fresh database of the engine name ("sqlite" or "postgres").
func Fresh(t testing.TB, name string) Target {
	t.Helper()
	if name == "postgres" {
		return Postgres(t)
	}
	return SQLite(t)
}

// SQLite returns a fresh SQLite database in a temporary directory.
func SQLite(t testing.TB) Target {
	t.Helper()
	u := "sqlite:" + filepath.Join(t.TempDir(), "test.db")
	return open(t, "sqlite", u)
}

// Postgres returns a fresh schema on TEST_DATABASE_URL, or skips (fails with REQUIRE_POSTGRES=1).
func Postgres(t testing.TB) Target {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		if os.Getenv("REQUIRE_POSTGRES") == "1" {
			t.Fatal("REQUIRE_POSTGRES=1 but TEST_DATABASE_URL is not set")
		}
		t.Skip("PostgreSQL variant skipped: TEST_DATABASE_URL is not set")
	}
	admin, err := storage.Open(t.Context(), base)
	if err != nil {
		t.Fatalf("open TEST_DATABASE_URL: %v", err)
	}
	defer admin.Close()
	schema := "t_" + randomHex(8)
	if _, err := admin.ExecContext(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		db, err := storage.Open(context.Background(), base)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer db.Close()
		if _, err := db.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse TEST_DATABASE_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return open(t, "postgres", u.String())
}

func open(t testing.TB, name, u string) Target {
	t.Helper()
	db, err := storage.Open(t.Context(), u)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return Target{Name: name, URL: u, DB: db}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
