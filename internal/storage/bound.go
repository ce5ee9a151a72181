package storage

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/schema"
)

// Args are the values of a bound statement, one per numbered parameter ($1, $2, ...), in order.
// Both engines take $n: modernc.org/sqlite binds SQLite's $NNN parameter to the NNNth argument.
type Args []any

// Add appends v and returns its placeholder.
func (a *Args) Add(v any) string {
	*a = append(*a, v)
	if n := len(*a); n < len(placeholders) {
		return placeholders[n]
	}
	return "$" + strconv.Itoa(len(*a))
}

// placeholders are "$1" to "$63", written once.
var placeholders = func() (p [64]string) {
	for i := range p {
		p[i] = "$" + strconv.Itoa(i)
	}
	return p
}()

// BoundInsert is db.NewInsert().Model(model) (model a pointer to a bun model struct) with
// numbered parameters: `INSERT INTO "table" ("col", ...) VALUES ($i, ...)`, each value appended
// to args. On PostgreSQL the columns are bun's less those its insert sets to DEFAULT (a nil
// pointer, a zero autoincrement key or nullzero field, a zero field with a default), which are
// left out and so get the same default; on SQLite, which has no DEFAULT in VALUES, such a column
// gets what bun writes there (its default expression, or NULL; a NOT NULL one is left out). See
// boundValue for the values.
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
	d := db.Dialect()
	table = d.Tables().Get(v.Type())
	var c, p strings.Builder
	c.Grow(24 * len(table.Fields)) // a quoted column name and its separator
	p.Grow(5 * len(table.Fields))  // "$nn, "
	*args = slices.Grow(*args, len(table.Fields))
	var scratch []byte
	for _, f := range table.Fields {
		val := ""
		if (f.IsPtr && f.HasNilValue(v)) || (f.HasZeroValue(v) && (f.NullZero || f.SQLDefault != "")) {
			if d.Name() != dialect.SQLite || f.NotNull {
				continue
			}
			val = cmp.Or(f.SQLDefault, "NULL") // as bun's insert on SQLite
		} else {
			bv, err := boundValue(d, f, v, &scratch)
			if err != nil {
				return nil, "", "", err
			}
			val = args.Add(bv)
		}
		if c.Len() > 0 {
			c.WriteString(", ")
			p.WriteString(", ")
		}
		c.WriteString(string(f.SQLName))
		p.WriteString(val)
	}
	return table, c.String(), p.String(), nil
}

// BoundSet is the SET list of db.NewUpdate().Model(model).Column(columns...) with numbered
// parameters: `"col" = $i, ...`, each value appended to args.
func BoundSet(db bun.IDB, model any, args *Args, columns ...string) (string, error) {
	v := reflect.ValueOf(model).Elem()
	table := db.Dialect().Tables().Get(v.Type())
	var b strings.Builder
	var scratch []byte
	for i, col := range columns {
		f, ok := table.FieldMap[col]
		if !ok {
			return "", fmt.Errorf("storage: %s has no column %q", table.Name, col)
		}
		val, err := boundValue(db.Dialect(), f, v, &scratch)
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
	driverValuer  = reflect.TypeFor[driver.Valuer]()
	nullTime      = reflect.TypeFor[bun.NullTime]() // written as its time, NULL when zero
)

// fieldKey names a field: the struct type bun read it from (the model's, or that of a struct
// the model embeds), its column, and whether it is directly in the model (an embedded struct's
// field is reached through a longer index, and is never a plainString).
type fieldKey struct {
	table  reflect.Type
	column string
	direct bool
}

// fieldFacts is what binding a field's value needs to know of the field that only its type and
// tag decide, worked out once per field (factsOf).
type fieldFacts struct {
	plain   bool  // plainString
	refusal error // why boundValue does not bind it on PostgreSQL; nil when it does
}

// fieldFactsCache holds factsOf's answers; it stays as small as the models.
var fieldFactsCache sync.Map // fieldKey -> fieldFacts

func factsOf(f *schema.Field) fieldFacts {
	k := fieldKey{f.Table.Type, f.Name, len(f.Index) == 1}
	if v, ok := fieldFactsCache.Load(k); ok {
		return v.(fieldFacts)
	}
	facts := fieldFacts{plain: isPlainString(f)}
	if f.IndirectType != nullTime && (f.IndirectType.Implements(queryAppender) || reflect.PointerTo(f.IndirectType).Implements(queryAppender)) {
		facts.refusal = fmt.Errorf("storage: bound %s.%s: bun writes it with its AppendQuery", f.Table.Name, f.Name)
	}
	for _, opt := range []string{"array", "hstore", "msgpack", "composite"} {
		if facts.refusal == nil && f.Tag.HasOption(opt) {
			facts.refusal = fmt.Errorf("storage: bound %s.%s: the %s option is not supported", f.Table.Name, f.Name, opt)
		}
	}
	fieldFactsCache.Store(k, facts)
	return facts
}

// plainString reports whether bun writes f as a quoted string literal: a field directly in its
// struct, of a string kind without an AppendQuery or Value of its own (on the type or its
// pointer), not msgpack and not a JSON column.
func plainString(f *schema.Field) bool { return factsOf(f).plain }

func isPlainString(f *schema.Field) bool {
	if len(f.Index) != 1 || f.Tag.HasOption("msgpack") {
		return false
	}
	switch strings.ToUpper(f.UserSQLType) {
	case "JSON", "JSONB":
		return false
	}
	t := f.StructField.Type
	pt := reflect.PointerTo(t)
	return t.Kind() == reflect.String &&
		!t.Implements(queryAppender) && !t.Implements(driverValuer) &&
		!pt.Implements(queryAppender) && !pt.Implements(driverValuer)
}

// validRunes is s with each byte that is not part of valid UTF-8 replaced by U+FFFD, as bun's
// string literal writes it.
func validRunes(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

// plainStringValue is the value of a plainString field when bun's literal holds the string as it
// is: NULL for an empty nullzero field, else the string if it is valid UTF-8 (bun writes U+FFFD
// for each invalid byte) without NUL (which bun refuses). ok is false otherwise, and for any
// other field: the literal decides.
func plainStringValue(f *schema.Field, strct reflect.Value) (v any, ok bool) {
	if !plainString(f) {
		return nil, false
	}
	s := strct.Field(f.Index[0]).String()
	switch {
	case f.NullZero && s == "":
		return nil, true
	case strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s):
		return nil, false
	}
	return s, true
}

// boundValue is the value of f in strct as a bound argument, what bun would write for it.
//
// On PostgreSQL: NULL where bun writes NULL (a nil pointer, a zero nullzero field), otherwise
// the Go value, which pgx encodes for the column's type as bun writes it (a driver.Valuer
// through its Value, a struct or map for a JSON column through encoding/json, a nil slice or map
// as NULL; a string that is not valid UTF-8 with U+FFFD for each invalid byte, as bun's literal
// has it). A field bun writes by other means (its AppendQuery, bun.NullTime aside, an array,
// hstore, msgpack or composite option) is refused rather than written differently.
//
// On SQLite, where a column takes any value, the value is read back from the literal bun
// writes for the field (sqliteLiteral), so that the stored value is bun's to the byte (its
// time format, its JSON text, its stripped NUL characters); scratch, when not nil, is a buffer
// the literal may be written into. A plain string (plainStringValue) is taken as it is when
// its literal would hold it unchanged: writing and reading back a raw XML's literal, a rune at a
// time, was most of a settlement's snapshot and values (BenchmarkSnapshot).
func boundValue(d schema.Dialect, f *schema.Field, strct reflect.Value, scratch *[]byte) (any, error) {
	if d.Name() == dialect.SQLite {
		if v, ok := plainStringValue(f, strct); ok {
			return v, nil
		}
		var buf []byte
		if scratch != nil {
			buf = (*scratch)[:0]
		}
		lit := f.AppendValue(schema.NewFormatter(d), buf, strct)
		if scratch != nil {
			*scratch = lit
		}
		v, err := sqliteLiteral(lit)
		if err != nil {
			return nil, fmt.Errorf("storage: bound %s.%s: %w", f.Table.Name, f.Name, err)
		}
		return v, nil
	}
	facts := factsOf(f)
	if facts.refusal != nil {
		return nil, facts.refusal
	}
	if (f.IsPtr && f.HasNilValue(strct)) || (f.NullZero && f.HasZeroValue(strct)) {
		return nil, nil
	}
	if facts.plain {
		if s := strct.Field(f.Index[0]).String(); !utf8.ValidString(s) {
			return validRunes(s), nil
		}
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

// sqliteLiteral is the value of one SQL literal as bun's SQLite dialect writes it: NULL, TRUE or
// FALSE, a quoted string (a quote doubled inside), a blob (X'hex') or a number. Anything else (an
// expression, an error bun wrote into the text) is an error.
func sqliteLiteral(lit []byte) (any, error) {
	n := len(lit)
	switch {
	case string(lit) == "NULL":
		return nil, nil
	case string(lit) == "TRUE":
		return true, nil
	case string(lit) == "FALSE":
		return false, nil
	case n >= 2 && lit[0] == '\'' && lit[n-1] == '\'':
		body := lit[1 : n-1]
		if !bytes.Contains(body, []byte("'")) {
			return string(body), nil
		}
		if bytes.Contains(bytes.ReplaceAll(body, []byte("''"), nil), []byte("'")) {
			return nil, fmt.Errorf("not a literal: %.40s", lit)
		}
		return string(bytes.ReplaceAll(body, []byte("''"), []byte("'"))), nil
	case n >= 3 && lit[0] == 'X' && lit[1] == '\'' && lit[n-1] == '\'':
		return hex.DecodeString(string(lit[2 : n-1]))
	}
	if v, err := strconv.ParseInt(string(lit), 10, 64); err == nil {
		return v, nil
	}
	if x, err := strconv.ParseFloat(string(lit), 64); err == nil {
		return x, nil
	}
	return nil, fmt.Errorf("not a literal: %.40s", lit)
}

// ScanBound runs a bound statement (query with numbered parameters, args its values) on the
// database/sql handle under db and scans its first row into dest as ScanOne does (reading the
// statement to its end). Each statement text is prepared once per connection and kept (by pgx;
// on SQLite by the connection's statement cache), so the database parses and plans it once: for
// the few statements on a request's path (see the package doc).
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

// BoundUpdate is the statement Update runs, with numbered parameters, each value appended to
// args: the columns of model that changed since the snapshot (never created_at) and version =
// prev+1, by primary key, where the stored row is still at version prev; "" when nothing changed
// (Update writes nothing then). A caller that runs it as part of a larger statement (a
// data-modifying WITH on PostgreSQL, with RETURNING to see whether the row matched) owns what
// Update does after it: a row not matched is ErrStale, and the version is prev+1 afterwards.
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
		pk, err := boundValue(db.Dialect(), f, v, nil)
		if err != nil {
			return "", err
		}
		b.WriteString(string(f.SQLName) + " = " + args.Add(pk) + " AND ")
	}
	b.WriteString(`"version" = ` + args.Add(prev))
	return b.String(), nil
}

// InsertBoundID runs BoundInsert of model, one row of a table whose primary key is an
// autoincrement column named id, and sets *id to the new row's key: with RETURNING on
// PostgreSQL, from the connection's last insert rowid on SQLite, which compiles a RETURNING
// clause into a trigger program (BenchmarkInsertBoundID). Not for an insert that may write no
// row (ON CONFLICT DO NOTHING): SQLite would report an earlier row's.
func InsertBoundID(ctx context.Context, db bun.IDB, model any, id *int64) error {
	var args Args
	q, err := BoundInsert(db, model, &args)
	if err != nil {
		return err
	}
	if IsPostgres(db) {
		return ScanBound(ctx, db, q+" RETURNING id", args, id)
	}
	res, err := ExecBound(ctx, db, q, args)
	if err != nil {
		return err
	}
	*id, err = res.LastInsertId()
	return err
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
