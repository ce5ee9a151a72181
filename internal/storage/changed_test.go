package storage_test

import (
	"errors"
	"slices"
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
		if _, err := tg.DB.ExecContext(ctx, `CREATE TABLE versioned (id BIGINT PRIMARY KEY, estado VARCHAR(20), note VARCHAR(20), version BIGINT NOT NULL)`); err != nil {
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
