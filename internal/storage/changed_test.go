package storage_test

import (
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
