package storage

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"slices"
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
// value appended to args. The columns are bun's less those its insert sets to DEFAULT (a nil
// pointer, a zero autoincrement key or nullzero field, a zero field with a default), which are
// left out and so get the same default; the values are given to pgx as they are in Go (see
// boundValue).
func BoundInsert(db bun.IDB, model any, args *Args) (string, error) {
	table, cols, vals, err := boundRow(db, model, args)
	if err != nil {
		return "", err
	}
	return "INSERT INTO " + string(table.SQLName) + " (" + cols + ") VALUES (" + vals + ")", nil
}

// boundRow gives BoundInsert's columns and placeholders, appending the values to args.
func boundRow(db bun.IDB, model any, args *Args) (table *schema.Table, cols, vals string, err error) {
	v := reflect.ValueOf(model).Elem()
	table = db.Dialect().Tables().Get(v.Type())
	var c, p strings.Builder
	for _, f := range table.Fields {
		if (f.IsPtr && f.HasNilValue(v)) || (f.HasZeroValue(v) && (f.NullZero || f.SQLDefault != "")) {
			continue
		}
		val, err := boundValue(f, v)
		if err != nil {
			return nil, "", "", err
		}
		if c.Len() > 0 {
			c.WriteString(", ")
			p.WriteString(", ")
		}
		c.WriteString(string(f.SQLName))
		p.WriteString(args.Add(val))
	}
	return table, c.String(), p.String(), nil
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

var (
	queryAppender = reflect.TypeFor[schema.QueryAppender]()
	nullTime      = reflect.TypeFor[bun.NullTime]() // written as its time, NULL when zero
)

// boundValue is the value of f in strct as a bound argument: NULL where bun writes NULL (a nil
// pointer, a zero nullzero field), otherwise the Go value, which pgx encodes for the column's type
// as bun writes it (a driver.Valuer through its Value, a struct or map for a JSON column through
// encoding/json, a nil slice or map as NULL). A field bun writes by other means (its AppendQuery,
// bun.NullTime aside, an array, hstore, msgpack or composite option) is refused rather than
// written differently.
func boundValue(f *schema.Field, strct reflect.Value) (any, error) {
	if f.IndirectType != nullTime && (f.IndirectType.Implements(queryAppender) || reflect.PointerTo(f.IndirectType).Implements(queryAppender)) {
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
	v := f.Value(strct).Interface()
	if tm, ok := v.(bun.NullTime); ok {
		if tm.IsZero() {
			return nil, nil
		}
		return tm.Time, nil
	}
	return v, nil
}

// ScanBound runs a bound statement (query with numbered parameters, args its values) on the
// database/sql handle under db and scans its first row into dest as ScanOne does (reading the statement to its end). On
// PostgreSQL pgx prepares each statement text once per connection and keeps it, so PostgreSQL
// parses and plans it once: for the few statements on a request's path (see the package doc).
func ScanBound(ctx context.Context, db bun.IDB, query string, args Args, dest ...any) error {
	rows, err := queryBound(ctx, db, query, args)
	if err != nil {
		return err
	}
	return scanFirst(rows, func(rows *sql.Rows) error { return rows.Scan(dest...) })
}

func queryBound(ctx context.Context, db bun.IDB, query string, args Args) (*sql.Rows, error) {
	h, err := sqlHandle(db)
	if err != nil {
		return nil, err
	}
	return h.QueryContext(ctx, query, args...)
}

// sqlHandle is the database/sql handle under db: bun formats '?' and drops the arguments of a
// statement written with $n, so bound statements bypass it.
func sqlHandle(db bun.IDB) (interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, error) {
	switch h := db.(type) {
	case *bun.DB:
		return h.DB, nil
	case bun.Tx:
		return h.Tx, nil
	case bun.Conn:
		return h.Conn, nil
	}
	return nil, fmt.Errorf("storage: bound statement on %T", db)
}

// BoundInsertFrom is BoundInsert taking its values once for each row of from, a table or WITH
// name of the statement it is part of: `INSERT INTO "table" ("col", ...) SELECT $i, ... FROM from
// RETURNING pk` (PostgreSQL gives each parameter its column's type). In a data-modifying WITH,
// with from the name of an UPDATE ... RETURNING, the row is written only when the update matched,
// in the same statement. Unlike bun's insert, it does not set the model's primary key.
func BoundInsertFrom(db bun.IDB, model any, from string, args *Args) (string, error) {
	table, cols, vals, err := boundRow(db, model, args)
	if err != nil {
		return "", err
	}
	q := "INSERT INTO " + string(table.SQLName) + " (" + cols + ") SELECT " + vals + " FROM " + from
	if len(table.PKs) > 0 {
		pk := make([]string, len(table.PKs))
		for i, f := range table.PKs {
			pk[i] = string(f.SQLName)
		}
		q += " RETURNING " + strings.Join(pk, ", ")
	}
	return q, nil
}

// BoundUpdate is UpdateQuery with numbered parameters, each value appended to args; "" when
// nothing changed. Update runs it on PostgreSQL; a caller that runs it as part of a larger
// statement owns what Update does after it, as with UpdateQuery.
func (s Snapshot) BoundUpdate(db bun.IDB, model any, prev int64, args *Args) (string, error) {
	cols := slices.DeleteFunc(s.Changed(model), func(c string) bool { return c == "created_at" || c == "version" })
	if len(cols) == 0 {
		return "", nil
	}
	set, err := BoundSet(db, model, args, cols...)
	if err != nil {
		return "", err
	}
	v := reflect.ValueOf(model).Elem()
	var b strings.Builder
	b.WriteString("UPDATE " + string(s.table.SQLName) + " SET " + set + `, "version" = ` + args.Add(prev+1) + " WHERE ")
	for _, f := range s.table.PKs {
		b.WriteString(string(f.SQLName) + " = " + args.Add(f.Value(v).Interface()) + " AND ")
	}
	b.WriteString(`"version" = ` + args.Add(prev))
	return b.String(), nil
}

// ExecBound runs a bound statement as ScanBound does, for its result.
func ExecBound(ctx context.Context, db bun.IDB, query string, args Args) (sql.Result, error) {
	h, err := sqlHandle(db)
	if err != nil {
		return nil, err
	}
	return h.ExecContext(ctx, query, args...)
}

// SelectBound runs q, a bun SELECT whose values are written as placeholders
// (Where("x = ?", bun.Safe(args.Add(v)))), as a bound statement on the handle under db, and scans
// its rows into dest as q.Scan(ctx, dest...) would: a struct gets the first row, sql.ErrNoRows
// when there is none; a slice gets every row.
func SelectBound(ctx context.Context, db bun.IDB, q *bun.SelectQuery, args Args, dest ...any) error {
	rows, err := queryBound(ctx, db, q.String(), args)
	if err != nil {
		return err
	}
	if len(dest) == 1 && reflect.TypeOf(dest[0]).Elem().Kind() == reflect.Slice {
		return q.DB().ScanRows(ctx, rows, dest...)
	}
	return scanFirst(rows, func(rows *sql.Rows) error { return q.DB().ScanRow(ctx, rows, dest...) })
}
