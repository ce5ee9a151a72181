package storage

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// Args are the values of a bound statement, one per numbered parameter ($1, $2, ...), in order.
type Args []any

// Add appends v and returns its placeholder.
func (a *Args) Add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// BoundInsert is db.NewInsert().Model(model) (model a pointer to a bun model struct) with
// PostgreSQL's numbered parameters: `INSERT INTO "table" ("col", ...) VALUES ($i, ...)`, each
// value appended to args. The columns are those InsertFrom writes (bun's insert less the
// columns it sets to DEFAULT); the values are given to pgx as they are in Go (see boundValue).
func BoundInsert(db bun.IDB, model any, args *Args) (string, error) {
	v := reflect.ValueOf(model).Elem()
	table := db.Dialect().Tables().Get(v.Type())
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(string(table.SQLName))
	b.WriteString(" (")
	var vals strings.Builder
	n := 0
	for _, f := range table.Fields {
		if (f.IsPtr && f.HasNilValue(v)) || (f.HasZeroValue(v) && (f.NullZero || f.SQLDefault != "")) {
			continue
		}
		val, err := boundValue(f, v)
		if err != nil {
			return "", err
		}
		if n > 0 {
			b.WriteString(", ")
			vals.WriteString(", ")
		}
		n++
		b.WriteString(string(f.SQLName))
		vals.WriteString(args.Add(val))
	}
	b.WriteString(") VALUES (")
	b.WriteString(vals.String())
	b.WriteByte(')')
	return b.String(), nil
}

// BoundSet is the SET list of db.NewUpdate().Model(model).Column(columns...) with numbered
// parameters: `"col" = $i, ...`, each value appended to args.
func BoundSet(db bun.IDB, model any, args *Args, columns ...string) (string, error) {
	v := reflect.ValueOf(model).Elem()
	table := db.Dialect().Tables().Get(v.Type())
	var b strings.Builder
	for i, col := range columns {
		f, ok := table.FieldMap[col]
		if !ok {
			return "", fmt.Errorf("storage: %s has no column %q", table.Name, col)
		}
		val, err := boundValue(f, v)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(f.SQLName))
		b.WriteString(" = ")
		b.WriteString(args.Add(val))
	}
	return b.String(), nil
}

var queryAppender = reflect.TypeFor[schema.QueryAppender]()

// boundValue is the value of f in strct as a bound argument: NULL where bun writes NULL (a nil
// pointer, a zero nullzero field), otherwise the Go value, which pgx encodes for the column's type
// as bun writes it (a driver.Valuer through its Value, a struct or map for a JSON column through
// encoding/json, a nil slice or map as NULL). A field bun writes by other means (its AppendQuery, an
// array, hstore, msgpack or composite option) is refused rather than written differently.
func boundValue(f *schema.Field, strct reflect.Value) (any, error) {
	if f.IndirectType.Implements(queryAppender) || reflect.PointerTo(f.IndirectType).Implements(queryAppender) {
		return nil, fmt.Errorf("storage: bound %s.%s: bun writes it with its AppendQuery", f.Table.Name, f.Name)
	}
	for _, opt := range []string{"array", "hstore", "msgpack", "composite"} {
		if f.Tag.HasOption(opt) {
			return nil, fmt.Errorf("storage: bound %s.%s: the %s option is not supported", f.Table.Name, f.Name, opt)
		}
	}
	if (f.IsPtr && f.HasNilValue(strct)) || (f.NullZero && f.HasZeroValue(strct)) {
		return nil, nil
	}
	return f.Value(strct).Interface(), nil
}

// ScanBound runs a bound statement (query with numbered parameters, args its values) on the
// database/sql handle under db, since bun would drop the arguments of a statement written with
// $n, and scans its first row into dest as ScanOne does (reading the statement to its end). On
// PostgreSQL pgx prepares each statement text once per connection and keeps it, so PostgreSQL
// parses and plans it once: for the few statements on a request's path (see the package doc).
func ScanBound(ctx context.Context, db bun.IDB, query string, args Args, dest ...any) error {
	var rows *sql.Rows
	var err error
	switch h := db.(type) {
	case *bun.DB:
		rows, err = h.DB.QueryContext(ctx, query, args...)
	case bun.Tx:
		rows, err = h.Tx.QueryContext(ctx, query, args...)
	case bun.Conn:
		rows, err = h.Conn.QueryContext(ctx, query, args...)
	default:
		return fmt.Errorf("storage: ScanBound on %T", db)
	}
	if err != nil {
		return err
	}
	return scanFirst(rows, dest)
}
