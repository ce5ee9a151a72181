package main

import (
	"errors"
	"log/slog"
	"net/http"
	"testing"
	"time"

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

// TestPurgeWithoutReconciler: an instance that runs no reconciler (RECARGAS_RECONCILE_INTERVAL
// 0) still deletes the action-token uses past their expiry and the throttle hits outside the
// window, which the reconciler's passes delete otherwise.
func TestPurgeWithoutReconciler(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		u := newUser("u-purge", "create_recargas", "view_recargas")
		s.do("POST", rechargePath, rechargeBodyFor("593991234567"), u.recharge(t)).expect(t, http.StatusCreated)
		count := func(table string) int {
			t.Helper()
			var n int
			if err := tg.DB.NewSelect().Table(table).ColumnExpr("count(*)").Scan(t.Context(), &n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if count("topup_action_tokens") == 0 || count("topup_throttle_hits") == 0 {
			t.Fatal("the top-up left no action-token use or throttle hit to purge")
		}
		s.clock.Advance(2 * time.Hour)
		s.addInstance(nil) // purges as it starts
		for end := time.Now().Add(5 * time.Second); count("topup_action_tokens")+count("topup_throttle_hits") > 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("after 5 s: %d action-token uses, %d throttle hits; want none", count("topup_action_tokens"), count("topup_throttle_hits"))
			}
		}
	})
}
