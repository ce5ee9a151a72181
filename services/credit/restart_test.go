package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

func TestMain(m *testing.M) {
	// A test may start this binary as the service itself (storagetest.StartChild).
	storagetest.RunChild(run)
	os.Exit(m.Run())
}

// childEnv is the development configuration of a service process started by a test.
var childEnv = map[string]string{"APP_ENV": "development", "LOG_LEVEL": "error", "CREDIT_RECONCILE_INTERVAL": "0"}

// TestRestartAfterAKillDuringMigrations: a process killed (SIGKILL) while it holds the migration
// lock leaves nothing that blocks the next start: migrate, reconcile and the service itself start
// within seconds, on both engines. Neither does a row that bun's old lock table kept.
func TestRestartAfterAKillDuringMigrations(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		for _, args := range [][]string{{"migrate"}, {"reconcile", "AUT-NONE", "applied"}} {
			url := storagetest.KillDuringMigrations(t, storagetest.Fresh(t, tg.Name), childEnv, "clients", args...)
			env := map[string]string{"DATABASE_URL": url}
			for k, v := range childEnv {
				env[k] = v
			}
			// What bun's migration lock left behind a killed process before: ignored now.
			db, err := storage.Open(t.Context(), url)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(t.Context(), `CREATE TABLE IF NOT EXISTS credit_migrations_locks (id INTEGER, table_name VARCHAR(255))`); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(t.Context(), `INSERT INTO credit_migrations_locks VALUES (1, 'credit_migrations')`); err != nil {
				t.Fatal(err)
			}
			db.Close()
			if out, err := storagetest.RunChildWithin(t, 10*time.Second, env, args...); args[0] == "migrate" && err != nil {
				t.Fatalf("migrate after the kill: %v %s", err, out)
			} else if args[0] == "reconcile" && !strings.Contains(out, "not found") {
				t.Fatalf("reconcile after the kill: %v %s, want it to run (and not find the authorization)", err, out)
			}
			if args[0] == "migrate" {
				storagetest.ServeUntilUp(t, env)
			}
		}
	})
}
