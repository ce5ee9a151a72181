package storagetest

import (
	"testing"

	"github.com/platform/integrations/internal/storage"
)

// MigrationsRoundTrip applies ms (recorded in table) up, down and up again, twice, on both
// engines: every migration's Down undoes its Up.
func MigrationsRoundTrip(t *testing.T, table string, ms *storage.Migrations) {
	t.Helper()
	Run(t, func(t *testing.T, tg Target) {
		ctx := t.Context()
		for range 2 {
			applied, err := storage.Migrate(ctx, tg.DB, table, ms)
			if err != nil || len(applied) != len(ms.Names()) {
				t.Fatalf("migrate: applied %v, %v", applied, err)
			}
			if _, err := storage.Rollback(ctx, tg.DB, table, ms); err != nil {
				t.Fatalf("rollback: %v", err)
			}
		}
	})
}
