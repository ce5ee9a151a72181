package storage_test

import (
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

type note struct {
	Text string `json:"text"`
}

type record struct {
	bun.BaseModel `bun:"table:records"`
	ID            int64           `bun:"id,pk,autoincrement"`
	Estado        string          `bun:"estado"`
	Monto         decimal.Decimal `bun:"monto"`
	Raw           []byte          `bun:"raw"`
	Note          *note           `bun:"note"`
	At            time.Time       `bun:"at"`
}

func TestSnapshotListsWhatChanged(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
		base := func() *record {
			return &record{ID: 7, Estado: "AUTORIZADO", Monto: decimal.RequireFromString("100.00"), Raw: []byte(`{"a":1}`), Note: &note{Text: "x"}, At: at}
		}
		cases := []struct {
			name   string
			change func(r *record)
			want   []string
		}{
			{"nothing", func(*record) {}, nil},
			{"one field", func(r *record) { r.Estado = "CONSUMIDO" }, []string{"estado"}},
			{"pointee changed in place", func(r *record) { r.Note.Text = "y" }, []string{"note"}},
			{"slice changed in place", func(r *record) { r.Raw[2] = 'b' }, []string{"raw"}},
			{"pointer cleared", func(r *record) { r.Note = nil }, []string{"note"}},
			{"several, primary key never", func(r *record) { r.ID, r.Monto, r.At = 8, decimal.RequireFromString("90"), at.Add(time.Second) }, []string{"monto", "at"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := base()
				snap := storage.TakeSnapshot(tg.DB, r)
				tc.change(r)
				if got := snap.Changed(r); !slices.Equal(got, tc.want) {
					t.Fatalf("changed %v, want %v", got, tc.want)
				}
			})
		}
	})
}

// versionedDDL creates versioned's table on either engine.
const versionedDDL = `CREATE TABLE versioned (id BIGINT PRIMARY KEY, estado VARCHAR(20), note VARCHAR(20), version BIGINT NOT NULL)`

type versioned struct {
	bun.BaseModel `bun:"table:versioned"`
	ID            int64  `bun:"id,pk"`
	Estado        string `bun:"estado"`
	Note          string `bun:"note"`
	Version       int64  `bun:"version"`
}

// Update writes what changed and bumps the version, writes nothing when nothing changed, and
// refuses a copy read before another write (ErrStale), on both engines.
func TestSnapshotUpdateIsCompareAndSet(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		ctx := t.Context()
		if _, err := tg.DB.ExecContext(ctx, versionedDDL); err != nil {
			t.Fatal(err)
		}
		if _, err := tg.DB.NewInsert().Model(&versioned{ID: 1, Estado: "A", Note: "n"}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		read := func() *versioned {
			v := &versioned{ID: 1}
			if err := tg.DB.NewSelect().Model(v).WherePK().Scan(ctx); err != nil {
				t.Fatal(err)
			}
			return v
		}
		first, second := read(), read()
		if v, err := storage.TakeSnapshot(tg.DB, first).Update(ctx, tg.DB, first, first.Version); err != nil || v != 0 {
			t.Fatalf("nothing changed: version %d, %v; want 0 and nothing written", v, err)
		}
		snap := storage.TakeSnapshot(tg.DB, first)
		first.Estado = "B"
		if v, err := snap.Update(ctx, tg.DB, first, first.Version); err != nil || v != 1 {
			t.Fatalf("one change: version %d, %v; want 1", v, err)
		}
		snap = storage.TakeSnapshot(tg.DB, second)
		second.Note = "late"
		if _, err := snap.Update(ctx, tg.DB, second, second.Version); !errors.Is(err, storage.ErrStale) {
			t.Fatalf("stale copy: %v, want ErrStale", err)
		}
		if got := read(); got.Estado != "B" || got.Note != "n" || got.Version != 1 {
			t.Fatalf("stored %+v, want the first write only", got)
		}
	})
}

type audited struct {
	bun.BaseModel `bun:"table:audited"`
	ID            int64     `bun:"id,pk,autoincrement"`
	Ref           string    `bun:"ref"`
	Body          string    `bun:"body,nullzero"`
	Kind          string    `bun:"kind,nullzero,default:'plain'"`
	Note          *note     `bun:"note"`
	Count         int64     `bun:"count"`
	At            time.Time `bun:"at"`
}

// On PostgreSQL, Snapshot.BoundUpdate and BoundInsertFrom make a data-modifying WITH: the insert
// writes the row bun's insert writes (a nullzero field NULL, a zero field with a default its
// default, a value holding '?' and quotes as it is), and only when the compare-and-set matched.
func TestBoundInsertFromTheUpdatesRow(t *testing.T) {
	tg := storagetest.Postgres(t)
	ctx := t.Context()
	for _, ddl := range []string{
		versionedDDL,
		`CREATE TABLE audited (id BIGSERIAL PRIMARY KEY, ref TEXT NOT NULL, body TEXT, kind TEXT DEFAULT 'plain', note JSONB, count BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL)`,
	} {
		if _, err := tg.DB.ExecContext(ctx, ddl); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tg.DB.NewInsert().Model(&versioned{ID: 1, Estado: "A"}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 10, 0, 0, 123456000, time.UTC)
	rows := []*audited{
		{Ref: "bun", Body: `<?xml version="1.0"?><a b='?'/>`, Note: &note{Text: "it's"}, Count: 3, At: at},
		{Ref: "bun, empty", At: at},
	}
	for _, r := range rows {
		if _, err := tg.DB.NewInsert().Model(r).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	settle := func(held *versioned, a *audited) (int64, error) {
		snap := storage.TakeSnapshot(tg.DB, held)
		next := *held
		next.Estado = "B-" + a.Ref
		var args storage.Args
		upd, err := snap.BoundUpdate(tg.DB, &next, held.Version, &args)
		if err != nil {
			return 0, err
		}
		ins, err := storage.BoundInsertFrom(tg.DB, a, "u", &args)
		if err != nil {
			return 0, err
		}
		var id int64
		err = storage.ScanBound(ctx, tg.DB, "WITH u AS ("+upd+" RETURNING id), c AS ("+ins+") SELECT (SELECT id FROM c) FROM u", args, &id)
		return id, err
	}
	held := &versioned{ID: 1, Estado: "A"}
	for i, r := range rows {
		c := *r
		c.ID, c.Ref = 0, "with"+strings.TrimPrefix(r.Ref, "bun")
		id, err := settle(&versioned{ID: 1, Estado: "A", Version: int64(i)}, &c)
		if err != nil || id == 0 {
			t.Fatalf("%s: id %d, %v", c.Ref, id, err)
		}
		var got, want map[string]any
		for _, q := range []struct {
			id  int64
			dst *map[string]any
		}{{r.ID, &want}, {id, &got}} {
			*q.dst = map[string]any{}
			if err := tg.DB.NewSelect().TableExpr("audited").ColumnExpr("body, kind, note::text, count, at").Where("id = ?", q.id).Scan(ctx, q.dst); err != nil {
				t.Fatal(err)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: row %v, bun's insert wrote %v", c.Ref, got, want)
		}
	}
	// A stale copy: the update matches nothing, so neither writes.
	c := *rows[0]
	c.ID, c.Ref = 0, "stale"
	if _, err := settle(held, &c); !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("stale copy: %v, want no row", err)
	}
	var n int
	if err := tg.DB.NewSelect().TableExpr("audited").ColumnExpr("count(*)").Where("ref = 'stale'").Scan(ctx, &n); err != nil || n != 0 {
		t.Fatalf("stale copy wrote %d rows, %v; want none", n, err)
	}
	var v versioned
	if err := tg.DB.NewSelect().Model(&v).Where("id = 1").Scan(ctx); err != nil || v.Version != 2 || v.Estado != "B-with, empty" {
		t.Fatalf("stored %+v, %v; want the two settlements", v, err)
	}
}

// ScanOne returns an error PostgreSQL raises after the row: here a deferred constraint checked
// at the commit of an autocommitted WITH, which bun's Scan drops.
func TestScanOneReadsTheStatementToItsEnd(t *testing.T) {
	tg := storagetest.Postgres(t)
	ctx := t.Context()
	for _, ddl := range []string{
		`CREATE TABLE deferred_check (id BIGINT PRIMARY KEY, ok BOOLEAN NOT NULL)`,
		`CREATE FUNCTION deferred_check_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN IF NOT NEW.ok THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NULL; END $$`,
		`CREATE CONSTRAINT TRIGGER deferred_check_refuse AFTER INSERT ON deferred_check
		 DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION deferred_check_refuse()`,
	} {
		if _, err := tg.DB.ExecContext(ctx, ddl); err != nil {
			t.Fatal(err)
		}
	}
	insert := func(id int64, ok bool) *bun.SelectQuery {
		ins := tg.DB.NewInsert().Model(&map[string]any{"id": id, "ok": ok}).ModelTableExpr("deferred_check").Returning("id")
		return tg.DB.NewSelect().With("i", ins).Table("i").Column("id")
	}
	var id int64
	if err := storage.ScanOne(ctx, insert(1, true), &id); err != nil || id != 1 {
		t.Fatalf("accepted row: id %d, %v", id, err)
	}
	if err := storage.ScanOne(ctx, insert(2, false), &id); err == nil || !strings.Contains(err.Error(), "refused at commit") {
		t.Fatalf("a row refused at commit: %v, want the commit's error", err)
	}
	var n int
	if err := tg.DB.NewSelect().Table("deferred_check").ColumnExpr("count(*)").Scan(ctx, &n); err != nil || n != 1 {
		t.Fatalf("%d rows (%v), want only the accepted one", n, err)
	}
	if err := storage.ScanOne(ctx, tg.DB.NewSelect().Table("deferred_check").Column("id").Where("id = 9"), &id); !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("no row: %v, want sql.ErrNoRows", err)
	}
}

// BenchmarkSnapshot is a settlement's work on a record with a 3 KB text column (a top-up's raw
// XML): the snapshot taken when it is read, the columns that changed, and their bound values.
//
//	go test -run '^$' -bench BenchmarkSnapshot ./internal/storage
func BenchmarkSnapshot(b *testing.B) {
	tg := storagetest.SQLite(b)
	body := strings.Repeat(`<a b="it's">café</a>`, 150)
	for b.Loop() {
		r := &audited{ID: 1, Ref: "ref-1", Body: body, Kind: "special", Note: &note{Text: "x"}, Count: 1}
		snap := storage.TakeSnapshot(tg.DB, r)
		r.Ref, r.Count = "ref-2", 2
		var args storage.Args
		if _, err := storage.BoundSet(tg.DB, r, &args, snap.Changed(r)...); err != nil {
			b.Fatal(err)
		}
	}
}
