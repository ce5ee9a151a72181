package topup

import (
	"testing"

	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// TestMigrationsRoundTrip: every migration goes up, down and up again on both databases.
func TestMigrationsRoundTrip(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		ctx := t.Context()
		for range 2 {
			applied, err := Migrate(ctx, tg.DB)
			if err != nil || len(applied) != len(Migrations.Names()) {
				t.Fatalf("migrate: applied %v, %v", applied, err)
			}
			if _, err := storage.Rollback(ctx, tg.DB, MigrationsTable, Migrations); err != nil {
				t.Fatalf("rollback: %v", err)
			}
		}
	})
}
