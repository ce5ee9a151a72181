package main

import (
	"os"
	"testing"
	"time"

	"github.com/platform/integrations/internal/storage/storagetest"
)

func TestMain(m *testing.M) {
	// A test may start this binary as the service itself (storagetest.StartChild).
	storagetest.RunChild(run)
	os.Exit(m.Run())
}

// TestRestartAfterAKillDuringMigrations: a process killed (SIGKILL) while it holds the migration
// lock leaves nothing that blocks the next start: migrate and the service itself start within
// seconds, on both engines.
func TestRestartAfterAKillDuringMigrations(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := map[string]string{"APP_ENV": "development", "LOG_LEVEL": "error", "RECARGAS_RECONCILE_INTERVAL": "0"}
		env["DATABASE_URL"] = storagetest.KillDuringMigrations(t, tg, env, "topup_transactions", "migrate")
		if out, err := storagetest.RunChildWithin(t, 10*time.Second, env, "migrate"); err != nil {
			t.Fatalf("migrate after the kill: %v %s", err, out)
		}
		storagetest.ServeUntilUp(t, env)
	})
}
