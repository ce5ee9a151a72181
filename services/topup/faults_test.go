package main

import (
	"github.com/platform/integrations/internal/storage"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/internal/idempotency"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// TestTopupWritesThatFail: the database refuses the write that records the carrier's answer to a
// top-up (manual and webhook). The answer still carries transaction_id and
// external_transaction_id, the record stays pending, a retry with the same Idempotency-Key (or a
// repeated delivery) reaches the carrier no more, and the reconciler settles the record from the
// carrier's word: success, with one top-up at the carrier.
func TestTopupWritesThatFail(t *testing.T) {
	for _, route := range []string{"recharge", "webhook"} {
		t.Run(route, func(t *testing.T) {
			storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
				faults := &storagetest.Faults{}
				s := newFaultyStack(t, tg, faults)
				u := newUser("op-fault", PermCreate, PermView)
				body := map[string]any(invoice("RECCARRIER3", 3, "593991234567"))
				send := func() answer {
					if route == "webhook" {
						return s.do("POST", webhookPath, body, serviceKey())
					}
					h := u.recharge(t)
					h[idempotency.Header] = "fault-recharge"
					return s.do("POST", rechargePath, rechargeBodyFor("593991234567"), h)
				}
				faults.Fail(`(?s)UPDATE "topup_transactions".*'success'`, -1)
				first := send()
				faults.Clear()
				if faults.Hits() == 0 {
					t.Fatal("the fault never fired")
				}
				first.expect(t, http.StatusInternalServerError)
				id, ext := first.str("transaction_id"), first.str("external_transaction_id")
				if id == "" || ext == "" || first.str("status") != "pending" || !strings.Contains(first.str("error"), "reconciled") {
					t.Fatalf("answer after the carrier acted: %s; want the ids and that it is being reconciled", first.raw)
				}
				again := send()
				if route == "webhook" {
					again.expect(t, http.StatusConflict) // the same invoice: a duplicate of the pending record
					if again.str("original_transaction_id") != id {
						t.Fatalf("repeated delivery: %s", again.raw)
					}
				} else if again.raw != first.raw || again.header.Get(idempotency.ReplayedHeader) != "true" {
					t.Fatalf("retry with the same key: %d %s, want the first answer replayed", again.status, again.raw)
				}
				if n := s.spr.Calls(carrier.FunctionTopup); n != 1 {
					t.Fatalf("%d top-ups reached the carrier, want 1", n)
				}
				if rec := s.transaction(t, id); rec["status"] != "pending" {
					t.Fatalf("record after the fault: %v", rec["status"])
				}
				s.clock.Advance(10 * time.Minute)
				rep, err := s.svc().Reconcile(t.Context())
				if err != nil || rep.Succeeded != 1 {
					t.Fatalf("reconciler pass %+v, %v", rep, err)
				}
				rec := s.transaction(t, id)
				if rec["status"] != "success" || rec["external_transaction_id"] != ext {
					t.Fatalf("after reconciliation: %v", rec)
				}
				if n := s.spr.Calls(carrier.FunctionTopup); n != 1 {
					t.Fatalf("%d top-ups reached the carrier after reconciliation, want 1", n)
				}
			})
		})
	}
}

// A key in the query string (or the userinfo) of CARRIER_SPR_URL never reaches what the service
// stores or shows: the record's carrier_diagnostic, the audit of the call, the answer.
func TestCarrierURLSecretsStayHidden(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := l.Addr().String()
		l.Close()
		in := s.addInstance(map[string]string{"CARRIER_SPR_URL": "http://spr:url-pass@" + closed + "/spr?token=url-token"})
		u := newUser("op-url", PermCreate, PermView)
		a := s.doOn(in, "POST", rechargePath, rechargeBodyFor("593991234567"), u.recharge(t)).expect(t, http.StatusBadGateway)
		rec := s.doOn(in, "GET", "/api/v1/recargas/transactions/"+a.str("transaction_id"), nil, bearer(u.token(t))).expect(t, http.StatusOK)
		if rec.body["carrier_diagnostic"] == nil {
			t.Fatalf("no diagnostic recorded: %s", rec.raw)
		}
		for _, where := range []string{a.raw, rec.raw, s.logs.String()} {
			if strings.Contains(where, "url-token") || strings.Contains(where, "url-pass") {
				t.Fatalf("the SPR URL's secrets reach %q", where)
			}
		}
	})
}

// TestRequestDeadlineBeforeTheCarrier: while the transactions table is locked, a manual top-up
// fails within REQUEST_TIMEOUT with a 503 and never reaches the carrier; /up answers meanwhile;
// once the lock is gone the same operator tops up normally.
func TestRequestDeadlineBeforeTheCarrier(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, map[string]string{"REQUEST_TIMEOUT": "1"})
		u := newUser("op-deadline", PermCreate)
		other, err := storage.Open(t.Context(), tg.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		tx, err := other.BeginTx(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		lock := "UPDATE topup_transactions SET quantity = quantity WHERE 1 = 0"
		if tg.Name == "postgres" {
			lock = "LOCK TABLE topup_transactions IN ACCESS EXCLUSIVE MODE"
		}
		if _, err := tx.ExecContext(t.Context(), lock); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		a := s.do("POST", rechargePath, rechargeBodyFor("593991234567"), u.recharge(t))
		if a.status != http.StatusServiceUnavailable || time.Since(start) > 6*time.Second {
			t.Fatalf("top-up behind a lock: %d %s after %s, want a 503 within the deadline", a.status, a.raw, time.Since(start))
		}
		if up := s.do("GET", "/up", nil, nil); up.status != http.StatusOK {
			t.Fatalf("/up while a table is locked: %d %s", up.status, up.raw)
		}
		_ = tx.Rollback()
		if n := s.spr.Calls(carrier.FunctionTopup); n != 0 {
			t.Fatalf("%d top-ups reached the carrier behind a lock", n)
		}
		s.do("POST", rechargePath, rechargeBodyFor("593991234567"), u.recharge(t)).expect(t, http.StatusCreated)
	})
}
