package credit_test

import (
	"testing"

	"github.com/platform/integrations/credit"
	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// TestMigrationsRoundTrip: every migration of the credit service goes up, down and up again on
// both databases.
func TestMigrationsRoundTrip(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		ctx := t.Context()
		for range 2 {
			applied, err := storage.Migrate(ctx, tg.DB, credit.MigrationsTable, credit.Migrations)
			if err != nil || len(applied) != len(credit.Migrations.Names()) {
				t.Fatalf("migrate: applied %v, %v", applied, err)
			}
			if _, err := storage.Rollback(ctx, tg.DB, credit.MigrationsTable, credit.Migrations); err != nil {
				t.Fatalf("rollback: %v", err)
			}
		}
	})
}
