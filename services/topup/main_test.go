package main

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/platform/integrations/internal/storage/storagetest"
)

// TestRunMigrate: run opens and migrates the database for every command and returns after
// migrate without serving; an unknown command is the usage error.
func TestRunMigrate(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		t.Setenv("APP_ENV", "development")
		t.Setenv("DATABASE_URL", tg.URL)
		t.Setenv("LOG_LEVEL", "error")
		defaultLog := slog.Default() // run sets its logger as the default
		t.Cleanup(func() { slog.SetDefault(defaultLog) })
		if err := run(t.Context(), []string{"migrate"}); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"topup_transactions", "topup_carrier_calls", "river_job"} {
			var n int
			if err := tg.DB.NewSelect().Table(table).ColumnExpr("count(*)").Scan(t.Context(), &n); err != nil {
				t.Fatalf("%s after migrate: %v", table, err)
			}
		}
		// GET /transactions/{id} finds a transaction's notification jobs through this index.
		query := `SELECT count(*) FROM pg_indexes WHERE indexname = 'river_job_arg_transaction_id_idx' AND schemaname = current_schema()`
		if tg.Name == "sqlite" {
			query = `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'river_job_arg_transaction_id_idx'`
		}
		var n int
		if err := tg.DB.QueryRowContext(t.Context(), query).Scan(&n); err != nil || n != 1 {
			t.Fatalf("river_job_arg_transaction_id_idx after migrate: %d, %v", n, err)
		}
		if err := run(t.Context(), []string{"serve", "now"}); !errors.Is(err, errUsage) {
			t.Fatalf("unknown command: err %v, want the usage error", err)
		}
	})
}
