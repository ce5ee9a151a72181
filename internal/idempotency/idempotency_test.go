package idempotency_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/idempotency"
	"github.com/platform/integrations/internal/storage/storagetest"
)

const table = "test_idempotency_keys"

// app is a service with one money-moving route that counts its runs. The caller is the X-Caller
// header (authentication's job in the services); status chooses the answer.
type app struct {
	fiber *fiber.App
	runs  atomic.Int32
	hold  chan struct{} // when set, the handler waits on it
}

func newApp(t *testing.T, tg storagetest.Target, now func() time.Time) *app {
	t.Helper()
	if err := idempotency.Migrate(t.Context(), tg.DB, table); err != nil {
		t.Fatal(err)
	}
	store := idempotency.NewStore(tg.DB, table)
	if now != nil {
		store = store.WithClock(now)
	}
	a := &app{}
	a.fiber = httpx.New(httpx.Config{Service: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	scope := func(c *fiber.Ctx) string { return c.Get("X-Caller") }
	a.fiber.Post("/pay", idempotency.Middleware(store, scope), func(c *fiber.Ctx) error {
		n := a.runs.Add(1)
		if a.hold != nil {
			<-a.hold
		}
		switch c.Query("status") {
		case "409":
			return httpx.NewError(http.StatusConflict, "busy")
		case "502":
			return httpx.NewError(http.StatusBadGateway, "upstream said no")
		}
		return c.Status(http.StatusCreated).JSON(fiber.Map{"run": n, "body": string(c.Body())})
	})
	return a
}

type answer struct {
	status   int
	body     string
	replayed string
	ctype    string
}

func (a *app) post(t *testing.T, caller, key, query, body string) answer {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/pay"+query, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Caller", caller)
	if key != "" {
		req.Header.Set(idempotency.Header, key)
	}
	res, err := a.fiber.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	return answer{res.StatusCode, string(b), res.Header.Get(idempotency.ReplayedHeader), res.Header.Get("Content-Type")}
}

func TestContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		a := newApp(t, tg, nil)
		first := a.post(t, "u1", "k-1", "", `{"monto":1}`)
		if first.status != 201 || first.replayed != "" {
			t.Fatalf("first: %+v", first)
		}
		again := a.post(t, "u1", "k-1", "", `{"monto":1}`)
		if again.status != 201 || again.body != first.body || again.replayed != "true" || !strings.HasPrefix(again.ctype, "application/json") {
			t.Fatalf("replay: %+v, want the first answer %+v with Idempotent-Replayed", again, first)
		}
		if n := a.runs.Load(); n != 1 {
			t.Fatalf("handler ran %d times, want 1", n)
		}
		if other := a.post(t, "u1", "k-1", "", `{"monto":2}`); other.status != 422 || !strings.Contains(other.body, "another request") {
			t.Fatalf("same key, other body: %+v, want 422", other)
		}
		if other := a.post(t, "u1", "k-1", "?status=502", `{"monto":1}`); other.status != 422 {
			t.Fatalf("same key, other path: %+v, want 422", other)
		}
		if other := a.post(t, "u2", "k-1", "", `{"monto":1}`); other.status != 201 || other.replayed != "" {
			t.Fatalf("same key of another caller: %+v, want a run of its own", other)
		}
		if none := a.post(t, "u1", "", "", `{"monto":1}`); none.status != 201 || none.replayed != "" {
			t.Fatalf("no key: %+v", none)
		}
		if n := a.runs.Load(); n != 3 {
			t.Fatalf("handler ran %d times, want 3", n)
		}
		for _, bad := range []string{strings.Repeat("k", 256), "with space", "tab\tkey", "ñ"} {
			if r := a.post(t, "u1", bad, "", `{}`); r.status != 400 {
				t.Fatalf("key %q: %+v, want 400", bad, r)
			}
		}
	})
}

// An upstream's refusal is an answer like any other: replayed, not run again. A conflict (409)
// means the request did not run: the key is released and a retry runs.
func TestWhichAnswersAreKept(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		a := newApp(t, tg, nil)
		refused := a.post(t, "u1", "k-502", "?status=502", `{}`)
		if again := a.post(t, "u1", "k-502", "?status=502", `{}`); again.status != 502 || again.replayed != "true" || again.body != refused.body {
			t.Fatalf("a 502 is not replayed: %+v", again)
		}
		busy := a.post(t, "u1", "k-409", "?status=409", `{}`)
		if busy.status != 409 {
			t.Fatalf("busy: %+v", busy)
		}
		if again := a.post(t, "u1", "k-409", "?status=409", `{}`); again.replayed != "" {
			t.Fatalf("a 409 was replayed: %+v", again)
		}
		if n := a.runs.Load(); n != 3 {
			t.Fatalf("handler ran %d times, want 3 (502 once, 409 twice)", n)
		}
	})
}

// Concurrent requests with one key: exactly one runs, the others are 409 while it runs; then
// they are replays.
func TestConcurrentSameKey(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		a := newApp(t, tg, nil)
		a.hold = make(chan struct{})
		const n = 10
		var wg sync.WaitGroup
		answers := make([]answer, n)
		var first answer
		done := make(chan struct{})
		go func() {
			first = a.post(t, "u1", "k-c", "", `{"x":1}`)
			close(done)
		}()
		for a.runs.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = a.post(t, "u1", "k-c", "", `{"x":1}`)
			}()
		}
		wg.Wait()
		close(a.hold)
		<-done
		for i, r := range answers {
			if r.status != 409 {
				t.Fatalf("request %d while the first ran: %+v, want 409", i, r)
			}
		}
		if first.status != 201 || a.runs.Load() != 1 {
			t.Fatalf("first %+v, runs %d", first, a.runs.Load())
		}
		if r := a.post(t, "u1", "k-c", "", `{"x":1}`); r.replayed != "true" || r.body != first.body {
			t.Fatalf("after: %+v, want a replay", r)
		}
	})
}

// Keys are kept DefaultTTL; past it the same key runs again.
func TestKeysExpire(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var mu sync.Mutex
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		a := newApp(t, tg, clock)
		a.post(t, "u1", "k-e", "", `{}`)
		mu.Lock()
		now = now.Add(idempotency.DefaultTTL - time.Minute)
		mu.Unlock()
		if r := a.post(t, "u1", "k-e", "", `{}`); r.replayed != "true" {
			t.Fatalf("within the TTL: %+v, want a replay", r)
		}
		mu.Lock()
		now = now.Add(2 * time.Minute)
		mu.Unlock()
		if r := a.post(t, "u1", "k-e", "", `{}`); r.replayed != "" || a.runs.Load() != 2 {
			t.Fatalf("past the TTL: %+v, runs %d; want a new run", r, a.runs.Load())
		}
	})
}

// TestPurgeDeletesOnlyExpiredKeys: Purge deletes every key past its expiry, answered or
// interrupted, in as many statements as it takes, and keeps the others.
func TestPurgeDeletesOnlyExpiredKeys(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		defer idempotency.SetPurgeBatch(3)()
		if err := idempotency.Migrate(t.Context(), tg.DB, table); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		store := idempotency.NewStore(tg.DB, table).WithClock(func() time.Time { return now })
		ctx := t.Context()
		begin := func(key string) {
			t.Helper()
			if rec, err := store.Begin(ctx, "u1", key, "fp"); rec != nil || err != nil {
				t.Fatalf("Begin %s: %v, %v", key, rec, err)
			}
		}
		for i := range 7 { // expired: six answered, one interrupted
			key := fmt.Sprint("old-", i)
			begin(key)
			if i > 0 {
				if err := store.Finish(ctx, "u1", key, http.StatusCreated, "application/json", []byte(`{}`)); err != nil {
					t.Fatal(err)
				}
			}
		}
		now = now.Add(23 * time.Hour)
		begin("young-1")
		begin("young-2")
		now = now.Add(time.Hour + time.Minute)

		if n, err := store.Purge(ctx); err != nil || n != 7 {
			t.Fatalf("Purge = %d, %v; want the 7 expired keys", n, err)
		}
		if left := countKeys(t, tg); left != 2 {
			t.Fatalf("%d keys left, want the 2 that have not expired", left)
		}
		if n, err := store.Purge(ctx); err != nil || n != 0 {
			t.Fatalf("second Purge = %d, %v; want 0", n, err)
		}
	})
}

// TestRunPurgesUntilCanceled: Run purges at once and at every tick, and returns when its context
// ends.
func TestRunPurgesUntilCanceled(t *testing.T) {
	tg := storagetest.SQLite(t)
	if err := idempotency.Migrate(t.Context(), tg.DB, table); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	store := idempotency.NewStore(tg.DB, table).WithClock(clock)
	expire := func(key string) {
		t.Helper()
		mu.Lock()
		now = now.Add(-25 * time.Hour)
		mu.Unlock()
		if _, err := store.Begin(t.Context(), "u1", key, "fp"); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		now = now.Add(25 * time.Hour)
		mu.Unlock()
	}
	waitGone := func() {
		t.Helper()
		for end := time.Now().Add(5 * time.Second); countKeys(t, tg) > 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatal("Run did not purge the expired key")
			}
		}
	}
	expire("k-1")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		store.Run(ctx, 20*time.Millisecond, slog.New(slog.DiscardHandler))
	}()
	waitGone()
	expire("k-2")
	waitGone()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return when its context ended")
	}
}

func countKeys(t *testing.T, tg storagetest.Target) int {
	t.Helper()
	var n int
	if err := tg.DB.QueryRowContext(t.Context(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
