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
	"github.com/platform/integrations/internal/config"
	"github.com/platform/integrations/topup"
)

func TestStatusOf(t *testing.T) {
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
			if got := statusOf(c.err); got != c.want {
				t.Fatalf("statusOf = %d, want %d", got, c.want)
			}
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
