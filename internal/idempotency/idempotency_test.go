package idempotency_test

import (
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
