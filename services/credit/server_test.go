package main

import (
	"strings"
	"testing"

	"github.com/platform/integrations/internal/storage/storagetest"
)

func TestUpAndMetrics(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		r := env.do("GET", "/up", nil, "")
		if r.Status != 200 || strings.TrimSpace(string(r.Body)) != `{"status":"ok"}` {
			t.Fatalf("GET /up = %d %s, want 200 {\"status\":\"ok\"}", r.Status, r.Body)
		}
		if r.Header.Get("X-Request-Id") == "" {
			t.Fatal("GET /up without X-Request-Id")
		}
		m := env.do("GET", "/metrics", nil, "")
		if m.Status != 200 || !strings.Contains(string(m.Body), "http_requests_total") {
			t.Fatalf("GET /metrics = %d, want 200 with the request counter", m.Status)
		}
		if err := env.health.Close(); err != nil {
			t.Fatal(err)
		}
		if r := env.do("GET", "/up", nil, ""); r.Status != 503 {
			t.Fatalf("GET /up with the database closed = %d %s, want 503", r.Status, r.Body)
		}
	})
}

func TestUnknownRouteIsEnvelope404(t *testing.T) {
	env := newTestEnv(t, storagetest.SQLite(t))
	expectError(t, env.do("GET", "/api/v1/credigestion/nope", nil, ""), 404)
}
