package storage

import (
	"errors"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// Unique is a unique constraint (or unique index) a store relies on: the name PostgreSQL
// reports for it and the table columns it covers, which is all SQLite reports. A store declares
// each one it needs once and asks Violated, so a duplicate is recognised by constraint, never by
// matching error text in the store.
type Unique struct {
	// Name as PostgreSQL reports it: the index name, or the generated <table>_<column>_key of
	// an inline UNIQUE.
	Name    string
	Table   string
	Columns []string
}

// Violated reports whether err is a violation of u: on PostgreSQL the violated constraint is u's
// name; on SQLite, whose error names only the columns ("UNIQUE constraint failed: t.a, t.b"),
// the columns are u's.
func (u Unique) Violated(err error) bool {
	if !IsUniqueViolation(err) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.ConstraintName == u.Name
	}
	var liteErr *sqlite.Error
	if !errors.As(err, &liteErr) {
		return false
	}
	_, cols, ok := strings.Cut(liteErr.Error(), "UNIQUE constraint failed: ")
	if !ok {
		return false
	}
	cols, _, _ = strings.Cut(cols, " (") // the driver appends " (2067)"
	want := make([]string, len(u.Columns))
	for i, c := range u.Columns {
		want[i] = u.Table + "." + c
	}
	got := strings.Split(cols, ", ")
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(got, want)
}
