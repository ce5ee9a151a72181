package fakehttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/platform/integrations/internal/fakehttp"
)

var errDropped = errors.New("dropped")

func TestTransport(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("X-Method", r.Method)
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(b)
		case "/abort":
			panic(http.ErrAbortHandler)
		case "/panic":
			panic("boom")
		case "/hold":
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}
	})
	c := &http.Client{Transport: fakehttp.Transport(h, errDropped)}
	do := func(ctx context.Context, path string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://fake.mock"+path, strings.NewReader("hola"))
		return c.Do(req)
	}

	t.Run("answer", func(t *testing.T) {
		resp, err := do(t.Context(), "/echo")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated || string(b) != "hola" || resp.Header.Get("X-Method") != "POST" {
			t.Errorf("answer = %d %q %v, want 201 \"hola\" with X-Method POST", resp.StatusCode, b, resp.Header)
		}
	})
	t.Run("aborted exchange is the dropped error", func(t *testing.T) {
		if _, err := do(t.Context(), "/abort"); !errors.Is(err, errDropped) {
			t.Errorf("err = %v, want the dropped error", err)
		}
	})
	t.Run("panic is an error", func(t *testing.T) {
		if _, err := do(t.Context(), "/panic"); err == nil || !strings.Contains(err.Error(), "boom") {
			t.Errorf("err = %v, want the panic as an error", err)
		}
	})
	t.Run("held request ends with its context", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if _, err := do(ctx, "/hold"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the context's deadline", err)
		}
	})
}
