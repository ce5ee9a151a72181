package storage_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/platform/integrations/internal/storage"
)

// openCacheDB opens a SQLite file with one table t (k TEXT PRIMARY KEY, v INTEGER) and returns its
// database/sql pool: statements with arguments reach the driver as they are (bun would write the
// arguments into the text).
func openCacheDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := storage.Open(t.Context(), filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if _, err := db.DB.ExecContext(t.Context(), `CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db.DB
}

// cached is the number of statements cached on db's connection; none may be left in use.
func cached(t *testing.T, db *sql.DB) int {
	t.Helper()
	n, busy, err := storage.CachedStatements(db)
	if err != nil {
		t.Fatal(err)
	}
	if busy != 0 {
		t.Fatalf("%d cached statements still in use with no rows open", busy)
	}
	return n
}

func keys(t *testing.T, rows *sql.Rows) []string {
	t.Helper()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

const insertT = `INSERT INTO t (k, v) VALUES (?, ?)`

// SQLite keeps a statement that comes with arguments compiled, and runs it correctly however it
// is used: again and again, a second time while the first one's rows are open, after an error,
// after a cancelled context, and past the cache's bound.
func TestSQLiteStatementCache(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, db *sql.DB)
	}{
		{"a statement run three times is compiled once", func(t *testing.T, db *sql.DB) {
			before := cached(t, db)
			for i, k := range []string{"a", "b", "c"} {
				if _, err := db.ExecContext(t.Context(), insertT, k, i); err != nil {
					t.Fatal(err)
				}
			}
			if got := cached(t, db) - before; got != 1 {
				t.Fatalf("%d statements cached, want 1", got)
			}
			rows, err := db.QueryContext(t.Context(), `SELECT k FROM t WHERE v >= ? ORDER BY k`, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(t, rows); !slices.Equal(got, []string{"b", "c"}) {
				t.Fatalf("keys %v, want [b c]", got)
			}
		}},
		{"the same query while its rows are open", func(t *testing.T, db *sql.DB) {
			for i, k := range []string{"a", "b", "c"} {
				if _, err := db.ExecContext(t.Context(), insertT, k, i); err != nil {
					t.Fatal(err)
				}
			}
			const q = `SELECT k FROM t WHERE v >= ? ORDER BY k`
			tx, err := db.BeginTx(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback() }()
			outer, err := tx.QueryContext(t.Context(), q, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !outer.Next() {
				t.Fatal("no first row")
			}
			var first string
			if err := outer.Scan(&first); err != nil {
				t.Fatal(err)
			}
			inner, err := tx.QueryContext(t.Context(), q, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(t, inner); !slices.Equal(got, []string{"b", "c"}) {
				t.Fatalf("inner keys %v, want [b c]", got)
			}
			if got := append([]string{first}, keys(t, outer)...); !slices.Equal(got, []string{"a", "b", "c"}) {
				t.Fatalf("outer keys %v, want [a b c]", got)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			rows, err := db.QueryContext(t.Context(), q, 2)
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(t, rows); !slices.Equal(got, []string{"c"}) {
				t.Fatalf("keys %v after both closed, want [c]", got)
			}
		}},
		{"an error leaves the statement usable", func(t *testing.T, db *sql.DB) {
			if _, err := db.ExecContext(t.Context(), insertT, "a", 1); err != nil {
				t.Fatal(err)
			}
			_, err := db.ExecContext(t.Context(), insertT, "a", 2)
			if !storage.IsUniqueViolation(err) {
				t.Fatalf("duplicate key: %v, want a unique violation", err)
			}
			if _, err := db.ExecContext(t.Context(), insertT, "b", 2); err != nil {
				t.Fatalf("insert after the violation: %v", err)
			}
			var n int
			if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM t WHERE v > ?`, 0).Scan(&n); err != nil || n != 2 {
				t.Fatalf("%d rows, %v; want 2", n, err)
			}
		}},
		{"rows closed by their context's end give the statement back", func(t *testing.T, db *sql.DB) {
			for i, k := range []string{"a", "b", "c"} {
				if _, err := db.ExecContext(t.Context(), insertT, k, i); err != nil {
					t.Fatal(err)
				}
			}
			const q = `SELECT k FROM t WHERE v >= ? ORDER BY k`
			before := cached(t, db)
			ctx, cancel := context.WithCancel(t.Context())
			rows, err := db.QueryContext(ctx, q, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !rows.Next() {
				t.Fatal("no first row")
			}
			cancel()
			// The one connection is free again only once database/sql has closed the rows for
			// the cancelled context: cached waits for it, then fails if the statement is still
			// in use.
			if after := cached(t, db); after != before+1 {
				t.Fatalf("%d statements cached, want %d", after, before+1)
			}
			if rows.Next() {
				t.Fatal("a row after the context ended")
			}
			if err := rows.Err(); !errors.Is(err, context.Canceled) {
				t.Fatalf("rows error %v, want context.Canceled", err)
			}
			rows, err = db.QueryContext(t.Context(), q, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(t, rows); !slices.Equal(got, []string{"b", "c"}) {
				t.Fatalf("keys %v after the cancellation, want [b c]", got)
			}
		}},
		{"past the bound statements run uncached", func(t *testing.T, db *sql.DB) {
			for i := range storage.MaxCachedStatements + 10 {
				var got int
				q := fmt.Sprintf(`SELECT ? + %d`, i)
				if err := db.QueryRowContext(t.Context(), q, 1).Scan(&got); err != nil || got != i+1 {
					t.Fatalf("%s: %d, %v; want %d", q, got, err, i+1)
				}
			}
			if got := cached(t, db); got > storage.MaxCachedStatements {
				t.Fatalf("%d statements cached, bound %d", got, storage.MaxCachedStatements)
			}
		}},
		{"a LIMIT given as a parameter limits as written", func(t *testing.T, db *sql.DB) {
			for i, k := range []string{"a", "b", "c", "d"} {
				if _, err := db.ExecContext(t.Context(), insertT, k, i); err != nil {
					t.Fatal(err)
				}
			}
			for _, q := range []string{
				`SELECT k FROM t WHERE v >= ?1 ORDER BY k LIMIT ?2`,
				`SELECT k FROM t WHERE v >= $1 ORDER BY k limit $2 OFFSET $3`,
			} {
				for _, c := range []struct {
					limit int
					want  []string
				}{{2, []string{"b", "c"}}, {0, nil}, {-1, []string{"b", "c", "d"}}, {1, []string{"b"}}} {
					args := []any{1, c.limit}
					if strings.Contains(q, "OFFSET") {
						args = append(args, 0)
					}
					rows, err := db.QueryContext(t.Context(), q, args...)
					if err != nil {
						t.Fatal(err)
					}
					if got := keys(t, rows); !slices.Equal(got, c.want) {
						t.Fatalf("%s with LIMIT %d: keys %v, want %v", q, c.limit, got, c.want)
					}
				}
			}
			if got := cached(t, db); got != 3 {
				t.Fatalf("%d statements cached, want the insert and the two queries", got)
			}
		}},
		{"column types of a cached query", func(t *testing.T, db *sql.DB) {
			rows, err := db.QueryContext(t.Context(), `SELECT k, v FROM t WHERE v > ?`, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			cts, err := rows.ColumnTypes()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, ct := range cts {
				names = append(names, ct.DatabaseTypeName())
			}
			if !slices.Equal(names, []string{"TEXT", "INTEGER"}) {
				t.Fatalf("column types %v, want [TEXT INTEGER]", names)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openCacheDB(t)
			tt.run(t, db)
			cached(t, db)
		})
	}
}

func TestLimitAsExpression(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"numbered", "SELECT id FROM j ORDER BY id LIMIT ?3", "SELECT id FROM j ORDER BY id LIMIT (?3 + 0)"},
		{"dollar, lower case", "select id from j limit $2 offset $3", "select id from j LIMIT ($2 + 0) offset $3"},
		{"bare", "SELECT id FROM j LIMIT ?", "SELECT id FROM j LIMIT (? + 0)"},
		{"named", "SELECT id FROM j LIMIT @max", "SELECT id FROM j LIMIT (@max + 0)"},
		{"in a subquery, newline", "UPDATE j SET n = 1 WHERE id IN (SELECT id FROM j\n    LIMIT ?3\n) RETURNING id",
			"UPDATE j SET n = 1 WHERE id IN (SELECT id FROM j\n    LIMIT (?3 + 0)\n) RETURNING id"},
		{"a literal stays", "SELECT id FROM j LIMIT 5", "SELECT id FROM j LIMIT 5"},
		{"an expression stays", "SELECT id FROM j LIMIT (?1 + 0)", "SELECT id FROM j LIMIT (?1 + 0)"},
		{"a column named like it stays", "SELECT limit_x FROM j WHERE nolimit = ?1", "SELECT limit_x FROM j WHERE nolimit = ?1"},
		{"in a string literal it stays", "SELECT id FROM j WHERE note = 'it''s LIMIT ?1' LIMIT ?2",
			"SELECT id FROM j WHERE note = 'it''s LIMIT ?1' LIMIT (?2 + 0)"},
		{"in comments it stays", "/* LIMIT ?1 */ SELECT id FROM j -- LIMIT ?1\nLIMIT ?2",
			"/* LIMIT ?1 */ SELECT id FROM j -- LIMIT ?1\nLIMIT (?2 + 0)"},
		{"after a comment with an apostrophe", "-- the job's row\nSELECT id FROM j LIMIT ?1",
			"-- the job's row\nSELECT id FROM j LIMIT (?1 + 0)"},
		{"in a quoted identifier it stays", `SELECT "LIMIT ?1", [LIMIT ?1] FROM j LIMIT ?2`,
			`SELECT "LIMIT ?1", [LIMIT ?1] FROM j LIMIT (?2 + 0)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := storage.LimitAsExpression(tc.in); got != tc.want {
				t.Fatalf("LimitAsExpression(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
