package main

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// lockTable holds, from a connection of its own, what keeps the service's writes to table
// waiting: an exclusive table lock on PostgreSQL, the write lock on SQLite. release ends it.
func lockTable(t *testing.T, tg storagetest.Target, table string) (release func()) {
	t.Helper()
	other, err := storage.Open(t.Context(), tg.URL)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := other.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lock := "UPDATE " + table + " SET id = id WHERE 1 = 0" // BEGIN IMMEDIATE already holds SQLite's write lock
	if tg.Name == "postgres" {
		lock = "LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE"
	}
	if _, err := tx.ExecContext(t.Context(), lock); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			_ = tx.Rollback()
			_ = other.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// TestRequestDeadlineBoundsDatabaseWork: while a table is locked, a request on it fails within
// REQUEST_TIMEOUT with a 503 and never calls the creditsystem; more requests than the pool
// holds do not take /up down (it has a connection of its own); once the lock is gone the same
// operation goes through, once.
func TestRequestDeadlineBoundsDatabaseWork(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg, withEnv("REQUEST_TIMEOUT", "1"))
		id := env.autorizar()
		release := lockTable(t, tg, "consumos")
		const n = 24 // more than PostgreSQL's pool of 20
		var wg sync.WaitGroup
		status := make([]int, n)
		bodies := make([][]byte, n)
		start := time.Now()
		for i := range n {
			wg.Go(func() {
				status[i], bodies[i], _ = env.postConsumo(env.client, "confirmar", env.userToken(), confirmarBody(id, "F-LOCKED"))
			})
		}
		time.Sleep(300 * time.Millisecond)
		up := env.do(http.MethodGet, "/up", nil, "")
		if up.Status != http.StatusOK {
			t.Errorf("/up while the pool waits on a lock: %d %s", up.Status, up.Body)
		}
		wg.Wait()
		if took := time.Since(start); took > 8*time.Second {
			t.Errorf("requests on the locked table took %s; REQUEST_TIMEOUT is 1 s", took)
		}
		for i, s := range status {
			if s != http.StatusServiceUnavailable {
				t.Fatalf("request %d answered %d %s, want 503", i, s, bodies[i])
			}
		}
		if calls := env.cs.Calls("GrabarConsumo"); calls != 0 {
			t.Fatalf("GrabarConsumo reached the creditsystem %d times behind a lock", calls)
		}
		release()
		// The pool reconnects after the lock; on a loaded machine a retry may still meet the 1 s
		// deadline: a 503 sent nothing, so the caller tries again.
		after := env.consumo("confirmar", confirmarBody(id, "F-AFTER-LOCK"))
		for try := 0; after.Status == http.StatusServiceUnavailable && try < 10; try++ {
			time.Sleep(200 * time.Millisecond)
			after = env.consumo("confirmar", confirmarBody(id, "F-AFTER-LOCK"))
		}
		consumoExpect(t, after, 200)
		if calls := env.cs.Calls("GrabarConsumo"); calls != 1 {
			t.Fatalf("GrabarConsumo reached the creditsystem %d times, want 1", calls)
		}
	})
}
