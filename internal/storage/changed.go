package storage

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// Snapshot is the SQL value of each column of a bun model as it was read, so that an UPDATE
// writes only the columns a change touched: a top-up's settlement changes a dozen of its forty
// columns, and writing the rest again (raw XML and payload included) cost a third of the
// statement on SQLite. The values are copied as SQL text, so a change made in place (through a
// pointer or a slice the record shares) is still seen.
type Snapshot struct {
	table  *schema.Table
	fmter  schema.Formatter
	values [][]byte
}

// TakeSnapshot records model (a pointer to a bun model struct) as it is now.
func TakeSnapshot(db bun.IDB, model any) Snapshot {
	v := reflect.ValueOf(model).Elem()
	s := Snapshot{table: db.Dialect().Tables().Get(v.Type()), fmter: schema.NewFormatter(db.Dialect())}
	// One buffer for every column's value.
	var buf []byte
	ends := make([]int, len(s.table.DataFields))
	for i, f := range s.table.DataFields {
		buf = s.value(buf, f, v)
		ends[i] = len(buf)
	}
	s.values = make([][]byte, len(ends))
	start := 0
	for i, end := range ends {
		s.values[i] = buf[start:end:end]
		start = end
	}
	return s
}

// value appends f's value in v: the string itself for a plain string field (plainString, its
// bytes compared as they are, which tells apart at least what bun's literal tells apart), bun's
// literal for any other.
func (s Snapshot) value(b []byte, f *schema.Field, v reflect.Value) []byte {
	if plainString(f) {
		return append(b, v.Field(f.Index[0]).String()...)
	}
	return f.AppendValue(s.fmter, b, v)
}

// Changed lists the columns of model (the snapshot's record, changed since) whose SQL value
// differs from the snapshot's; primary keys are never listed.
func (s Snapshot) Changed(model any) []string {
	v := reflect.ValueOf(model).Elem()
	var out []string
	var buf []byte
	for i, f := range s.table.DataFields {
		buf = s.value(buf[:0], f, v)
		if !bytes.Equal(buf, s.values[i]) {
			out = append(out, f.Name)
		}
	}
	return out
}

// ErrStale is Snapshot.Update's answer when the stored row is no longer at the version it was
// read at: another write came first.
var ErrStale = errors.New("storage: record changed since it was read")

// Update writes, by primary key, the columns of model that changed since the snapshot (never
// created_at) and version = prev+1, provided the stored row is still at version prev; ErrStale
// otherwise. It returns the row's version afterwards: prev when nothing changed (nothing is
// written), prev+1 when it wrote. The model's table must have a "version" column that every
// write goes through here to bump.
func (s Snapshot) Update(ctx context.Context, db bun.IDB, model any, prev int64) (int64, error) {
	var args Args
	q, err := s.BoundUpdate(db, model, prev, &args)
	if err != nil || q == "" {
		return prev, err
	}
	res, err := ExecBound(ctx, db, q, args)
	if err != nil {
		return prev, fmt.Errorf("storage: update %s: %w", s.table.Name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return prev, fmt.Errorf("storage: update %s: %w", s.table.Name, err)
	}
	if n != 1 {
		return prev, ErrStale
	}
	return prev + 1, nil
}

// ScanOne runs q and scans its first row into dest, like q.Scan(ctx, dest...), but reads the
// statement to its end: an error PostgreSQL sends after the row (one raised at commit by a
// deferred constraint, the end of an autocommitted data-modifying WITH) is returned, where bun's
// Scan, which stops at the first row, would drop it. No row is sql.ErrNoRows.
func ScanOne(ctx context.Context, q *bun.SelectQuery, dest ...any) error {
	rows, err := q.Rows(ctx)
	if err != nil {
		return err
	}
	return scanFirst(rows, func(rows *sql.Rows) error { return rows.Scan(dest...) })
}

// scanFirst scans the first row of rows with scan and reads rows to their end; no row is
// sql.ErrNoRows.
func scanFirst(rows *sql.Rows, scan func(*sql.Rows) error) error {
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := scan(rows); err != nil {
		return err
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}
