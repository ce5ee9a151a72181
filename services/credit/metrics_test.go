package main

import (
	"net/http"
	"testing"

	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/internal/metrics/metricstest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// scrape reads GET /metrics into series (name{labels} as exposed, labels sorted) -> value.
func (e *testEnv) scrape() map[string]float64 {
	e.t.Helper()
	r := e.do(http.MethodGet, "/metrics", nil, "")
	if r.Status != http.StatusOK {
		e.t.Fatalf("GET /metrics = %d", r.Status)
	}
	m, err := metricstest.Parse(string(r.Body))
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func upstreamCalls(upstream, operation, outcome string) string {
	return `upstream_requests_total{operation="` + operation + `",outcome="` + outcome + `",upstream="` + upstream + `"}`
}

// TestMetricsLabelUpstreamCallsByBusinessResult: a creditsystem refusal (lError in an HTTP 200)
// and an ERP refusal (error_api) are rejected, not ok; an ERP 500 is a fault; a creditsystem
// that does not answer is a timeout and leaves an authorization whose outcome is unknown in its
// gauge.
func TestMetricsLabelUpstreamCallsByBusinessResult(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		const op = "GrabarAutorizacion"

		if r := env.consumo("autorizacion", autorizacionBody("300.00")); r.Status != http.StatusOK {
			t.Fatalf("authorization = %d %s", r.Status, r.Body)
		}
		expectUpstream502(t, env.consumo("autorizacion", autorizacionBody("666.66")), op, "51")
		m := env.scrape()
		for outcome, want := range map[string]float64{"ok": 1, "rejected": 1} {
			if got := m[upstreamCalls("creditsystem", op, outcome)]; got != want {
				t.Errorf("%s = %v, want %v", upstreamCalls("creditsystem", op, outcome), got, want)
			}
		}
		for _, outcome := range []string{"fault", "timeout", "unreachable"} {
			if _, ok := m[upstreamCalls("creditsystem", op, outcome)]; ok {
				t.Errorf("%s exposed: nothing ended so", upstreamCalls("creditsystem", op, outcome))
			}
		}

		// ERP: a refusal in an HTTP 200 (error_api) and an HTTP 500, both 502 to the caller.
		expectError(t, env.do("POST", clientsPath+"/from-creditsystem",
			map[string]any{"codigo_empresa": "000598", "nombre_cliente": erptest.NombreClienteErrorAPI, "identificacion": "0400000008"}, env.serviceKey()),
			http.StatusBadGateway)
		expectError(t, env.do("POST", clientsPath+"/exists",
			map[string]any{"codigo_empresa": "000598", "identificacion": erptest.IdentificacionServerError}, env.serviceKey()),
			http.StatusBadGateway)
		m = env.scrape()
		for outcome, want := range map[string]float64{"rejected": 1, "fault": 1} {
			if got := m[upstreamCalls("erp", "LookupClient", outcome)]; got != want {
				t.Errorf("%s = %v, want %v", upstreamCalls("erp", "LookupClient", outcome), got, want)
			}
		}
		if got := m[upstreamCalls("erp", "LookupClient", "ok")]; got != 0 {
			t.Errorf("%s = %v, want 0", upstreamCalls("erp", "LookupClient", "ok"), got)
		}

		// No answer within CREDITSYSTEM_TIMEOUT: a timeout, and an authorization whose outcome
		// is unknown (no autorizacion_id is known), waiting for a person.
		if got := m["credit_authorizations_unrecorded"]; got != 0 {
			t.Fatalf("credit_authorizations_unrecorded = %v before any timeout", got)
		}
		expectError(t, env.consumo("autorizacion", autorizacionBody("504.04")), http.StatusGatewayTimeout)
		m = env.scrape()
		if got := m[upstreamCalls("creditsystem", op, "timeout")]; got != 1 {
			t.Errorf("%s = %v, want 1", upstreamCalls("creditsystem", op, "timeout"), got)
		}
		for _, gauge := range []string{"credit_authorizations_unrecorded", "credit_consumos_outcome_unknown", "credit_pagos_outcome_unknown", "credit_payment_handovers_failing"} {
			want := 0.0
			if gauge == "credit_authorizations_unrecorded" {
				want = 1
			}
			if got, ok := m[gauge]; !ok || got != want {
				t.Errorf("%s = %v (exposed %v), want %v", gauge, got, ok, want)
			}
		}
	})
}
