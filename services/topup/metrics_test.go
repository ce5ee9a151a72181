package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/internal/metrics/metricstest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// scrape reads GET /metrics into series (name{labels} as exposed, labels sorted) -> value.
func (s *stack) scrape(t *testing.T) map[string]float64 {
	t.Helper()
	a := s.do("GET", "/metrics", nil, nil).expect(t, http.StatusOK)
	m, err := metricstest.Parse(a.raw)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// want checks series in m, each of which must be exposed.
func wantSeries(t *testing.T, step string, m map[string]float64, want map[string]float64) {
	t.Helper()
	for series, v := range want {
		got, ok := m[series]
		if !ok {
			t.Errorf("%s: %s missing from /metrics", step, series)
		} else if got != v {
			t.Errorf("%s: %s = %v, want %v", step, series, got, v)
		}
	}
}

func recharges(source, status string) string {
	return `topup_recharges_total{source="` + source + `",status="` + status + `"}`
}

func carrierCalls(function, outcome string) string {
	return `upstream_requests_total{operation="` + function + `",outcome="` + outcome + `",upstream="carrier"}`
}

// TestMetricsShowTheBusiness: after a webhook top-up that succeeds, one the carrier refuses and
// one it cannot take (a fault), /metrics counts each record once under its status, labels the
// carrier calls by what they came to (not ok for a refusal), and shows the unavailable one
// waiting for the reconciler; the reconciler's retry does not count it again, and when its
// retries run out it moves from waiting to exhausted.
func TestMetricsShowTheBusiness(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, map[string]string{"RECARGAS_RECONCILE_MAX_RETRIES": "1"})
		const webhook = "workflow-webhook"
		statuses := []string{"success", "failed", "unavailable", "rejected"}

		before := s.scrape(t)
		zero := map[string]float64{
			`topup_recharges_waiting{status="pending"}`:                         0,
			`topup_recharges_waiting{status="unavailable"}`:                     0,
			"topup_recharges_oldest_waiting_seconds":                            0,
			"topup_recharges_retries_exhausted":                                 0,
			`topup_recharges_retries_exhausted_total{source="` + webhook + `"}`: 0,
			recharges("dashboard", "success"):                                   0,
			recharges("workflow-ignored", "ignored"):                            0,
			"topup_notifications_waiting":                                       0,
		}
		for _, st := range statuses {
			zero[recharges(webhook, st)] = 0
		}
		wantSeries(t, "fresh service", before, zero)

		for subscriber, status := range map[string]string{
			"593991234567":                        "success",
			carriertest.SubscriberNoBalance:       "failed",
			carriertest.SubscriberIPNotAuthorized: "unavailable",
		} {
			a := s.do("POST", webhookPath, invoice("RECCARRIER5", 5, subscriber), serviceKey()).expect(t, http.StatusCreated)
			if a.str("status") != status {
				t.Fatalf("%s: %s", subscriber, a.raw)
			}
		}
		after := s.scrape(t)
		for _, st := range statuses {
			want := before[recharges(webhook, st)]
			if st != "rejected" {
				want++
			}
			wantSeries(t, "three top-ups", after, map[string]float64{recharges(webhook, st): want})
		}
		wantSeries(t, "three top-ups", after, map[string]float64{
			recharges("dashboard", "success"):               0,
			carrierCalls(carrier.FunctionTopup, "ok"):       1,
			carrierCalls(carrier.FunctionTopup, "rejected"): 1,
			carrierCalls(carrier.FunctionTopup, "fault"):    1,
			`topup_recharges_waiting{status="unavailable"}`: 1,
			`topup_recharges_waiting{status="pending"}`:     0,
			"topup_recharges_retries_exhausted":             0,
		})
		for _, o := range []string{"timeout", "unreachable"} {
			if v := after[carrierCalls(carrier.FunctionTopup, o)]; v != 0 {
				t.Errorf("%s = %v, want 0", carrierCalls(carrier.FunctionTopup, o), v)
			}
		}
		if after["topup_notifications_waiting"] != 3 {
			t.Errorf("topup_notifications_waiting = %v, want the 3 announcements (no worker runs in this test)", after["topup_notifications_waiting"])
		}

		// A refused invoice is a record too.
		s.do("POST", webhookPath, invoice("RECCARRIER7", 7, "593991234567"), serviceKey()).expect(t, http.StatusUnprocessableEntity)
		wantSeries(t, "refused invoice", s.scrape(t), map[string]float64{recharges(webhook, "rejected"): before[recharges(webhook, "rejected")] + 1})

		// First pass: the carrier does not have the faulted top-up (its query is a refusal); it
		// is sent again, faults again and stays unavailable: counted once, still waiting.
		s.clock.Advance(2 * time.Minute)
		if rep, err := s.svc().Reconcile(t.Context()); err != nil || rep.Retried != 1 {
			t.Fatalf("first pass %+v %v", rep, err)
		}
		m := s.scrape(t)
		wantSeries(t, "first pass", m, map[string]float64{
			recharges(webhook, "unavailable"):                       after[recharges(webhook, "unavailable")],
			carrierCalls(carrier.FunctionQueryRecharge, "rejected"): 1,
			carrierCalls(carrier.FunctionTopup, "fault"):            2,
			`topup_recharges_waiting{status="unavailable"}`:         1,
			"topup_recharges_retries_exhausted":                     0,
		})
		if age := m["topup_recharges_oldest_waiting_seconds"]; age < 120 {
			t.Errorf("topup_recharges_oldest_waiting_seconds = %v, want at least the 2 minutes that passed", age)
		}

		// Second pass: no retry left and the carrier still does not have it.
		s.clock.Advance(2 * time.Minute)
		if rep, err := s.svc().Reconcile(t.Context()); err != nil || rep.Exhausted != 1 {
			t.Fatalf("second pass %+v %v", rep, err)
		}
		wantSeries(t, "exhausted", s.scrape(t), map[string]float64{
			recharges(webhook, "unavailable"):                                   after[recharges(webhook, "unavailable")],
			`topup_recharges_waiting{status="unavailable"}`:                     0,
			"topup_recharges_oldest_waiting_seconds":                            0,
			"topup_recharges_retries_exhausted":                                 1,
			`topup_recharges_retries_exhausted_total{source="` + webhook + `"}`: 1,
		})
	})
}
