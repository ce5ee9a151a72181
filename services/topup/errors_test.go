package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/internal/config"
	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/storage/storagetest"
	"github.com/platform/integrations/topup"
)

func TestErrorAnswer(t *testing.T) {
	rec := &topup.Transaction{}
	timeout := &carrier.TransportError{Op: carrier.FunctionTopup, Err: context.DeadlineExceeded}
	refused := &carrier.TransportError{Op: carrier.FunctionTopup, Err: errors.New("connection refused")}
	fault := &carrier.FaultError{Op: carrier.FunctionTopup, Code: "350", String: "IP address not authorized"}
	business := &carrier.Error{Op: carrier.FunctionTopup, Status: "ERROR", Code: "1", Message: "no balance"}
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"validation", &topup.ValidationError{Fields: []topup.FieldError{{Field: "x", Message: "is required"}}}, 400},
		{"action token used", topup.ErrActionTokenUsed, 401},
		{"action token invalid", topup.ErrActionTokenInvalid, 401},
		{"not found", topup.ErrNotFound, 404},
		{"duplicate invoice", &topup.DuplicateError{}, 409},
		{"concurrent change", topup.ErrConflict, 409},
		{"rejected invoice", &topup.RejectedError{Transaction: rec}, 422},
		{"charge not confirmed", topup.ErrChargeNotConfirmed, 422},
		{"throttled", &topup.ThrottleError{}, 429},
		{"daily limit", topup.ErrDailyLimit, 429},
		{"top-up failed", &topup.CarrierError{Transaction: rec, Err: business}, 422},
		{"top-up fault", &topup.CarrierError{Transaction: rec, Err: fault}, 502},
		{"top-up unreachable", &topup.CarrierError{Transaction: rec, Err: refused}, 502},
		{"top-up timeout", &topup.CarrierError{Transaction: rec, Err: timeout}, 504},
		{"query refused by the carrier", business, 502},
		{"query fault", fault, 502},
		{"query timeout", timeout, 504},
		{"wrapped", fmt.Errorf("ctx: %w", topup.ErrDailyLimit), 429},
		{"unknown", errors.New("boom"), 500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			he := mapError(c.err)
			if c.want == http.StatusInternalServerError {
				if he != nil {
					t.Fatalf("mapError gave %+v for an unknown error; want nil (httpx answers a bare 500)", he)
				}
				return
			}
			if he == nil || he.Status != c.want {
				t.Fatalf("mapError = %+v, want status %d", he, c.want)
			}
			if env, isEnvelope := he.Body.(httpx.Envelope); he.Body == nil || isEnvelope && env.StatusCode != c.want {
				t.Fatalf("mapError body = %+v, want an answer of status %d", he.Body, c.want)
			}
		})
	}
}

func TestLoadSettings(t *testing.T) {
	load := func(env map[string]string) (settings, error) {
		t.Helper()
		env["APP_ENV"] = "development"
		cfg, err := config.ParseTopup(env)
		if err != nil {
			return settings{}, err
		}
		return loadSettings(cfg.Recargas)
	}
	s, err := load(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	want := topup.ReconcileConfig{Interval: time.Minute, PendingAfter: 5 * time.Minute, RetryAfter: time.Minute, MaxRetries: 3}
	if s.Reconcile != want || s.ReconcileDisabled {
		t.Fatalf("defaults: reconcile %+v disabled %v, want %+v (README's table)", s.Reconcile, s.ReconcileDisabled, want)
	}
	if p, ok := s.Products.Lookup("RECCARRIER10"); !ok || p.OfferID != "151" {
		t.Fatalf("default products: RECCARRIER10 = %+v, %v; the specification maps it to offer 151", p, ok)
	}
	s, err = load(map[string]string{
		"RECARGAS_PRODUCTS":                `[{"product_code":"RECCARRIER20","offer_id":"200","external_operation":"RECARGA_PINES","amount":"20.00"}]`,
		"RECARGAS_RECONCILE_INTERVAL":      "0",
		"RECARGAS_RECONCILE_PENDING_AFTER": "120",
		"RECARGAS_RECONCILE_MAX_RETRIES":   "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := s.Products.Lookup("RECCARRIER20"); !ok || p.OfferID != "200" || !s.ReconcileDisabled || s.Reconcile.PendingAfter != 2*time.Minute || s.Reconcile.MaxRetries != -1 {
		t.Fatalf("settings %+v", s)
	}
	for _, c := range []struct{ name, value string }{
		{"RECARGAS_PRODUCTS", "[]"},
		{"RECARGAS_PRODUCTS_FILE", "/nonexistent/products.json"},
		{"RECARGAS_RECONCILE_INTERVAL", "-1"},
		{"RECARGAS_RECONCILE_PENDING_AFTER", "soon"},
		{"RECARGAS_RECONCILE_RETRY_AFTER", "0"},
		{"RECARGAS_RECONCILE_MAX_RETRIES", "-2"},
	} {
		_, err := load(map[string]string{c.name: c.value})
		if err == nil || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s=%q: err %v, want one naming the variable", c.name, c.value, err)
		}
	}
}

// TestUpstreamFailuresAreGeneric: what a client is told about a carrier it could not reach is
// generic ("carrier unavailable", "carrier timeout"), never the transport error, the SPR's
// URL or its host. Before, query-recharge and inventory copied the transport error (Post
// "http://127.0.0.1:port/...": EOF) into message.upstreamMessage.
func TestUpstreamFailuresAreGeneric(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		host := strings.TrimPrefix(s.spr.URL, "http://")
		viewer := bearer(newUser("viewer", PermView).token(t))
		op := newUser("generic", PermCreate)
		query := map[string]any{"external_transaction_id": "X", "offer_id": "31"}
		cases := []struct {
			name     string
			function string
			reaction carriertest.Reaction
			send     func() answer
			status   int
			upstream string // message.upstreamMessage of the envelope; "" when the body is not the envelope
		}{
			{"query, connection dropped", carrier.FunctionQueryRecharge, carriertest.Drop(),
				func() answer { return s.do("POST", queryPath, query, viewer) }, http.StatusBadGateway, "carrier unavailable"},
			{"query, timeout", carrier.FunctionQueryRecharge, carriertest.Hang(),
				func() answer { return s.do("POST", queryPath, query, viewer) }, http.StatusGatewayTimeout, "carrier timeout"},
			{"inventory, connection dropped", carrier.FunctionQueryInventory, carriertest.Drop(),
				func() answer { return s.do("GET", "/api/v1/recargas/inventory", nil, viewer) }, http.StatusBadGateway, "carrier unavailable"},
			{"inventory, timeout", carrier.FunctionQueryInventory, carriertest.Hang(),
				func() answer { return s.do("GET", "/api/v1/recargas/inventory", nil, viewer) }, http.StatusGatewayTimeout, "carrier timeout"},
			{"recharge, connection dropped", carrier.FunctionTopup, carriertest.Drop(),
				func() answer { return s.do("POST", rechargePath, rechargeBodyFor("593991234567"), op.recharge(t)) }, http.StatusBadGateway, ""},
			{"webhook, connection dropped", carrier.FunctionTopup, carriertest.Drop(),
				func() answer {
					return s.do("POST", webhookPath, invoice("RECCARRIER5", 5, "593991234567"), serviceKey())
				}, http.StatusCreated, ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s.spr.Script(c.function, c.reaction)
				a := c.send().expect(t, c.status)
				for _, leak := range []string{host, "http://", "127.0.0.1", "dial", "EOF", "Post "} {
					if strings.Contains(a.raw, leak) {
						t.Fatalf("the answer holds %q: %s", leak, a.raw)
					}
				}
				if c.upstream != "" {
					if m := a.obj("message"); m["upstreamMessage"] != c.upstream || m["operation"] != c.function {
						t.Fatalf("message %v, want upstreamMessage %q", m, c.upstream)
					}
				} else if a.str("error") == "" {
					t.Fatalf("body %s, want a generic error", a.raw)
				}
				if c.function == carrier.FunctionTopup {
					// The record keeps the technical diagnostic for operators; the
					// notification, which reaches the branch, does not.
					rec := s.transaction(t, a.str("transaction_id"))
					notes, _ := rec["notifications"].([]any)
					if rec["status"] != "unavailable" || rec["carrier_diagnostic"] == nil || len(notes) != 1 {
						t.Fatalf("record %v", rec)
					}
				}
			})
		}
	})
}
