package storage_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

type boundState string

// boundDay is stored through its driver.Valuer, the zero day as NULL.
type boundDay struct{ time.Time }

func (d boundDay) Value() (driver.Value, error) {
	if d.IsZero() {
		return nil, nil
	}
	return d.Format(time.DateOnly), nil
}

// boundRow has a field of each kind the stores write.
type boundRow struct {
	bun.BaseModel `bun:"table:bound_rows"`
	ID            int64               `bun:"id,pk,autoincrement"`
	Ref           string              `bun:"ref,notnull"`
	State         boundState          `bun:"state,notnull"`
	Body          string              `bun:"body,nullzero"`
	Kind          string              `bun:"kind,nullzero,default:'plain'"`
	Count         int                 `bun:"count,notnull"`
	Code          *int                `bun:"code"`
	Flag          bool                `bun:"flag,notnull"`
	Monto         decimal.Decimal     `bun:"monto,notnull"`
	Facturado     decimal.NullDecimal `bun:"facturado"`
	Day           boundDay            `bun:"day"`
	Raw           json.RawMessage     `bun:"raw"`
	Note          *note               `bun:"note"`
	Tags          map[string]string   `bun:"tags"`
	At            time.Time           `bun:"at,notnull"`
	DoneAt        time.Time           `bun:"done_at,nullzero"`
	SeenAt        bun.NullTime        `bun:"seen_at"`
}

// boundPart is a model of its own and embedded in boundWhole: its field reaches BoundInsert
// through both.
type boundPart struct {
	Name string `bun:"name"`
}

type boundWhole struct {
	bun.BaseModel `bun:"table:bound_wholes"`
	ID            int64 `bun:"id,pk,autoincrement"`
	boundPart
}

// A field bound directly and the same field bound through a struct that embeds it each bind its
// own value, whichever came first.
func TestBoundInsertOfAnEmbeddedStruct(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		for _, model := range []any{&boundPart{Name: "part"}, &boundWhole{boundPart: boundPart{Name: "whole"}}, &boundPart{Name: "part"}} {
			var args storage.Args
			if _, err := storage.BoundInsert(tg.DB, model, &args); err != nil {
				t.Fatal(err)
			}
			want := "part"
			if w, ok := model.(*boundWhole); ok {
				want = w.Name
			}
			if len(args) != 1 || args[0] != want {
				t.Errorf("%T bound %#v, want [%q]", model, args, want)
			}
		}
	})
}

// boundRowColumns are boundRow's columns but its key.
const boundRowColumns = "ref, state, body, kind, count, code, flag, monto, facturado, day, raw, note, tags, at, done_at, seen_at"

// BoundInsert and BoundSet write the row bun's insert and update write: the same columns left to
// their default, the same NULLs, the same values (quotes, '?', '$1', JSON, times and, on SQLite,
// each value's storage class), row for row.
func TestBoundStatementsWriteBunsRow(t *testing.T) {
	storagetest.Run(t, testBoundStatementsWriteBunsRow)
}

func testBoundStatementsWriteBunsRow(t *testing.T, tg storagetest.Target) {
	ctx := t.Context()
	ddl := `CREATE TABLE bound_rows (id BIGSERIAL PRIMARY KEY, ref TEXT NOT NULL,
		state TEXT NOT NULL, body TEXT, kind TEXT DEFAULT 'plain', count INTEGER NOT NULL, code INTEGER,
		flag BOOLEAN NOT NULL DEFAULT TRUE, monto NUMERIC(18,2) NOT NULL, facturado NUMERIC(18,2), day DATE,
		raw JSONB, note JSONB, tags JSONB, at TIMESTAMPTZ NOT NULL, done_at TIMESTAMPTZ, seen_at TIMESTAMPTZ)`
	// row reads a stored row as text, without its key: JSON on PostgreSQL, each value quoted
	// (its storage class visible) on SQLite.
	row := func(id int64) string {
		var s string
		if err := tg.DB.NewRaw(`SELECT (to_jsonb(r) - 'id')::text FROM bound_rows r WHERE id = ?`, id).Scan(ctx, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if tg.Name == "sqlite" {
		ddl = strings.Replace(ddl, "BIGSERIAL PRIMARY KEY", "INTEGER PRIMARY KEY AUTOINCREMENT", 1)
		row = func(id int64) string {
			var s string
			q := "SELECT " + strings.ReplaceAll("quote("+boundRowColumns+")", ", ", ") || ' ' || quote(") + " FROM bound_rows WHERE id = ?"
			if err := tg.DB.NewRaw(q, id).Scan(ctx, &s); err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	if _, err := tg.DB.ExecContext(ctx, ddl); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 28, 10, 0, 0, 123456000, time.FixedZone("ECT", -5*3600))
	code := 7
	full := boundRow{State: "A", Body: `<?xml version="1.0"?><a b='?' c="$1"/>`, Kind: "special", Count: 3,
		Code: &code, Monto: decimal.RequireFromString("100.10"), Facturado: decimal.NewNullDecimal(decimal.RequireFromString("99.9")),
		Day: boundDay{time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)}, Raw: json.RawMessage(`{"a": [1, "it's"]}`),
		Note: &note{Text: "it's $2"}, Tags: map[string]string{"k": "v"}, At: at, DoneAt: at.Add(time.Second),
		SeenAt: bun.NullTime{Time: at.Add(time.Minute)}}
	cases := []struct {
		name string
		row  boundRow
	}{
		{"every field set", full},
		{"zero fields", boundRow{At: at}},
		{"empty JSON and a zero amount", boundRow{Raw: json.RawMessage(`{}`), Tags: map[string]string{}, At: at}},
		{"strings that are not valid UTF-8", boundRow{State: "caf\xe9", Body: "it's \xff\xfe ok", At: at}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			viaBun, viaBound := tc.row, tc.row
			viaBun.Ref, viaBound.Ref = "bun", "bun"
			if _, err := tg.DB.NewInsert().Model(&viaBun).Returning("id").Exec(ctx); err != nil {
				t.Fatal(err)
			}
			var args storage.Args
			q, err := storage.BoundInsert(tg.DB, &viaBound, &args)
			if err != nil {
				t.Fatal(err)
			}
			// Only kind's default, which bun writes on SQLite, may be in the text.
			if strings.Contains(strings.ReplaceAll(q, "'plain'", ""), "'") {
				t.Fatalf("a value was written into the statement: %s", q)
			}
			if err := storage.InsertBoundID(ctx, tg.DB, &viaBound, &viaBound.ID); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if viaBound.ID == viaBun.ID || viaBound.ID == 0 {
				t.Fatalf("InsertBoundID set id %d (bun's row: %d)", viaBound.ID, viaBun.ID)
			}
			if got, want := row(viaBound.ID), row(viaBun.ID); got != want {
				t.Fatalf("bound insert stored\n%s\nbun's insert\n%s", got, want)
			}

			// Both rows updated to the other cases' values, by bun and by BoundSet.
			cols := []string{"state", "body", "code", "facturado", "day", "raw", "note", "tags", "done_at", "seen_at"}
			for _, next := range cases {
				next.row.ID = viaBun.ID
				if _, err := tg.DB.NewUpdate().Model(&next.row).Column(cols...).WherePK().Exec(ctx); err != nil {
					t.Fatal(err)
				}
				next.row.ID = viaBound.ID
				var args storage.Args
				set, err := storage.BoundSet(tg.DB, &next.row, &args, cols...)
				if err != nil {
					t.Fatal(err)
				}
				q := "UPDATE bound_rows SET " + set + " WHERE id = " + args.Add(viaBound.ID) + " RETURNING id"
				var id int64
				if err := storage.ScanBound(ctx, tg.DB, q, args, &id); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				if got, want := row(viaBound.ID), row(viaBun.ID); got != want {
					t.Fatalf("to %q: bound update stored\n%s\nbun's update\n%s", next.name, got, want)
				}
			}
		})
	}
}

type boundArray struct {
	bun.BaseModel `bun:"table:bound_arrays"`
	ID            int64    `bun:"id,pk,autoincrement"`
	Tags          []string `bun:"tags,array"`
}

// nowExpr is written by bun as an SQL expression, not a value.
type nowExpr struct{}

func (nowExpr) AppendQuery(_ schema.Formatter, b []byte) ([]byte, error) {
	return append(b, "CURRENT_TIMESTAMP"...), nil
}

type boundExpr struct {
	bun.BaseModel `bun:"table:bound_exprs"`
	ID            int64   `bun:"id,pk,autoincrement"`
	At            nowExpr `bun:"at"`
}

// A field bun writes in a way of its own is refused, not written differently.
func TestBoundInsertRefusesWhatItCannotWriteAsBun(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		var args storage.Args
		if q, err := storage.BoundInsert(tg.DB, &boundExpr{}, &args); err == nil {
			t.Fatalf("a field bun writes as an expression: %s, want an error", q)
		}
		if tg.Name == "postgres" {
			if q, err := storage.BoundInsert(tg.DB, &boundArray{Tags: []string{"a"}}, &args); err == nil {
				t.Fatalf("array field: %s, want an error", q)
			}
		}
		if _, err := storage.BoundSet(tg.DB, &boundRow{}, &args, "nope"); err == nil {
			t.Fatal("unknown column: want an error")
		}
	})
}

// SelectBound reads what q.Scan reads: a struct the row (sql.ErrNoRows without one), a slice
// every row, in a transaction too.
func TestSelectBoundScansAsBun(t *testing.T) {
	storagetest.Run(t, testSelectBoundScansAsBun)
}

func testSelectBoundScansAsBun(t *testing.T, tg storagetest.Target) {
	ctx := t.Context()
	if _, err := tg.DB.ExecContext(ctx, versionedDDL); err != nil {
		t.Fatal(err)
	}
	rows := []versioned{{ID: 1, Estado: "A", Note: "it's $1", Version: 3}, {ID: 2, Estado: "A", Version: 1}, {ID: 3, Estado: "B"}}
	if _, err := tg.DB.NewInsert().Model(&rows).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	one := func(db bun.IDB, id int64) (versioned, error) {
		var v versioned
		var args storage.Args
		err := storage.SelectBound(ctx, db, db.NewSelect().Model(&v).Where("id = ?", bun.Safe(args.Add(id))), args, &v)
		return v, err
	}
	if v, err := one(tg.DB, 1); err != nil || v != rows[0] {
		t.Fatalf("by id 1: %+v, %v; want %+v", v, err, rows[0])
	}
	if v, err := one(tg.DB, 9); !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("by id 9: %+v, %v; want sql.ErrNoRows", v, err)
	}
	err := tg.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		v, err := one(tx, 2)
		if err != nil || v != rows[1] {
			t.Errorf("in a transaction: %+v, %v; want %+v", v, err, rows[1])
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var all []versioned
	var args storage.Args
	q := tg.DB.NewSelect().Model(&all).Where("estado = ?", bun.Safe(args.Add("A"))).Order("id")
	if err := storage.SelectBound(ctx, tg.DB, q, args, &all); err != nil || len(all) != 2 || all[0] != rows[0] || all[1] != rows[1] {
		t.Fatalf("estado A: %+v, %v; want the first two rows", all, err)
	}
}

// On SQLite a bound statement is compiled once per connection: the same statement shape with
// other values reuses it.
func TestBoundStatementsStayCompiledOnSQLite(t *testing.T) {
	tg := storagetest.SQLite(t)
	ctx := t.Context()
	if _, err := tg.DB.ExecContext(ctx, versionedDDL); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		row := versioned{ID: int64(i + 1), Estado: "A", Note: fmt.Sprintf("n%d", i), Version: 1}
		var args storage.Args
		q, err := storage.BoundInsert(tg.DB, &row, &args)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := storage.ExecBound(ctx, tg.DB, q, args); err != nil {
			t.Fatal(err)
		}
	}
	if n, busy, err := storage.CachedStatements(tg.DB.DB); err != nil || n != 1 || busy != 0 {
		t.Fatalf("cached statements %d (%d in use), %v; want the insert's, once", n, busy, err)
	}
}

func TestSQLiteLiteral(t *testing.T) {
	cases := []struct {
		name, lit string
		want      any
	}{
		{"null", "NULL", nil},
		{"true", "TRUE", true},
		{"false", "FALSE", false},
		{"string", "'abc'", "abc"},
		{"empty string", "''", ""},
		{"doubled quote", "'it''s ''$1'''", "it's '$1'"},
		{"JSON text", `'{"a":"it''s"}'`, `{"a":"it's"}`},
		{"time", "'2026-11-29 03:30:00.123456+00:00'", "2026-11-29 03:30:00.123456+00:00"},
		{"blob", "X'00ff'", []byte{0, 0xff}},
		{"integer", "-42", int64(-42)},
		{"float", "1.5", 1.5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := storage.SQLiteLiteral([]byte(tc.lit))
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%s: %#v, %v; want %#v", tc.lit, got, err, tc.want)
			}
		})
	}
	for _, lit := range []string{"CURRENT_TIMESTAMP", "'a'b'", "'''", "X'zz'", "1 + 1", ""} {
		if got, err := storage.SQLiteLiteral([]byte(lit)); err == nil {
			t.Errorf("%q: %#v, want an error", lit, got)
		}
	}
}
