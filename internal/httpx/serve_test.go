package httpx_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/internal/httpx"
)

type served struct {
	base    string
	errc    chan error
	started chan struct{}
	release chan struct{}
}

func serve(t *testing.T, ctx context.Context, grace time.Duration) served {
	t.Helper()
	s := served{errc: make(chan error, 1), started: make(chan struct{}, 1), release: make(chan struct{})}
	app := httpx.New(httpx.Config{Service: "serve-test"})
	app.Get("/slow", func(c *fiber.Ctx) error {
		s.started <- struct{}{}
		<-s.release
		return c.SendString("done")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.base = "http://" + ln.Addr().String()
	go func() { s.errc <- httpx.ServeListener(ctx, app, ln, grace, nil) }()
	return s
}

type result struct {
	status int
	body   string
	err    error
}

func get(url string) <-chan result {
	out := make(chan result, 1)
	go func() {
		res, err := (&http.Client{Timeout: 5 * time.Second}).Get(url)
		if err != nil {
			out <- result{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		out <- result{status: res.StatusCode, body: string(b), err: err}
	}()
	return out
}

func TestServeFinishesInFlightRequestOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s := serve(t, ctx, 5*time.Second)

	inflight := get(s.base + "/slow")
	<-s.started
	cancel()

	select {
	case err := <-s.errc:
		t.Fatalf("Serve returned (%v) while a request was still in flight", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(s.release)

	r := <-inflight
	if r.err != nil || r.status != http.StatusOK || r.body != "done" {
		t.Fatalf("in-flight request did not complete: %+v", r)
	}
	select {
	case err := <-s.errc:
		if err != nil {
			t.Fatalf("Serve = %v, want nil after a clean stop", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the in-flight request finished")
	}
	if r := <-get(s.base + "/up"); r.err == nil {
		t.Errorf("server still accepts requests after shutdown: %+v", r)
	}
}

func TestServeGraceExpires(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s := serve(t, ctx, 100*time.Millisecond)
	inflight := get(s.base + "/slow")
	<-s.started
	cancel()
	select {
	case err := <-s.errc:
		if err == nil {
			t.Error("Serve = nil, want an error when the grace period ends with a request in flight")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve ignored its grace period")
	}
	close(s.release)
	<-inflight
}

func TestServeStopsOnSIGTERM(t *testing.T) {
	s := serve(t, t.Context(), 5*time.Second)
	close(s.release)
	// A served request proves ServeListener is past signal.NotifyContext, so the signal is caught
	// by it and not by the default handler that would end the test binary.
	if r := <-get(s.base + "/slow"); r.err != nil || r.status != http.StatusOK {
		t.Fatalf("server not serving: %+v", r)
	}
	<-s.started
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.errc:
		if err != nil {
			t.Fatalf("Serve = %v after SIGTERM, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not stop on SIGTERM")
	}
}

// A stop that comes before the server has started (SIGTERM during start-up) must still end
// Serve: fasthttp's Shutdown does nothing to a server that has not registered its listener yet.
func TestServeStopsWhenStoppedBeforeStart(t *testing.T) {
	for i := range 50 {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		s := serve(t, ctx, time.Second)
		select {
		case err := <-s.errc:
			if err != nil {
				t.Fatalf("run %d: Serve = %v, want nil", i, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("run %d: Serve still running 5 s after a stop that came before it started", i)
		}
	}
}
