package main

import (
	"net/http"
	"sync"
	"testing"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/internal/idempotency"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// A retry of POST /recharge with the same Idempotency-Key, even with a new action token, replays
// the first answer: one top-up at the carrier, and the new token is not spent.
func TestRechargeIdempotencyKey(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		u := newUser("op-idem", PermCreate, PermView)
		with := func(key string) map[string]string {
			h := u.recharge(t)
			h[idempotency.Header] = key
			return h
		}
		body := rechargeBodyFor("593991234567")
		first := s.do("POST", rechargePath, body, with("recarga-1")).expect(t, http.StatusCreated)
		retryToken := u.actionToken(t)
		h := with("recarga-1")
		h["X-Action-Token"] = retryToken
		again := s.do("POST", rechargePath, body, h).expect(t, http.StatusCreated)
		if again.raw != first.raw || again.header.Get(idempotency.ReplayedHeader) != "true" {
			t.Fatalf("retry answered %s (replayed %q), want the first answer %s replayed", again.raw, again.header.Get(idempotency.ReplayedHeader), first.raw)
		}
		if n := s.spr.Calls(carrier.FunctionTopup); n != 1 {
			t.Fatalf("%d top-ups reached the carrier, want 1", n)
		}
		// The retry's token was not spent: it tops up once, as a new request.
		h = bearer(u.token(t))
		h["X-Action-Token"] = retryToken
		s.do("POST", rechargePath, body, h).expect(t, http.StatusCreated)
		// The same key for another top-up is refused and changes nothing.
		s.do("POST", rechargePath, rechargeBodyFor("593991234568"), with("recarga-1")).expect(t, http.StatusUnprocessableEntity)
		if n := s.spr.Calls(carrier.FunctionTopup); n != 2 {
			t.Fatalf("%d top-ups reached the carrier, want 2", n)
		}
	})
}

// Concurrent retries of one top-up with one key: exactly one reaches the carrier; the others
// are replays of its answer or 409 while it runs.
func TestRechargeIdempotencyKeyConcurrent(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		g := carriertest.NewGate()
		s := newStack(t, tg, nil)
		s.spr.Script(carrier.FunctionTopup, carriertest.Process().Until(g))
		u := newUser("op-idem-c", PermCreate)
		body := rechargeBodyFor("593991234567")
		const n = 12
		answers := make([]answer, n)
		var wg sync.WaitGroup
		for i := range n {
			h := u.recharge(t)
			h[idempotency.Header] = "recarga-c"
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = s.do("POST", rechargePath, body, h)
			}()
		}
		<-g.Reached()
		g.Open()
		wg.Wait()
		created := 0
		for _, a := range answers {
			switch {
			case a.status == http.StatusCreated:
				created++
			case a.status == http.StatusConflict:
			default:
				t.Fatalf("answer %d: %s", a.status, a.raw)
			}
		}
		if created == 0 || s.spr.Calls(carrier.FunctionTopup) != 1 {
			t.Fatalf("%d created, %d top-ups at the carrier; want one top-up", created, s.spr.Calls(carrier.FunctionTopup))
		}
	})
}
