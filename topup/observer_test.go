package topup

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// counts is an Observer that keeps what it was told.
type counts struct {
	mu        sync.Mutex
	reached   map[string]int // "source/status"
	exhausted map[Source]int
}

func newCounts() *counts {
	return &counts{reached: map[string]int{}, exhausted: map[Source]int{}}
}

func (c *counts) Reached(src Source, st Status) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reached[string(src)+"/"+string(st)]++
}

func (c *counts) RetriesExhausted(src Source) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.exhausted[src]++
}

func (c *counts) reachedCount(src Source, st Status) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reached[string(src)+"/"+string(st)]
}

func (c *counts) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("reached %v exhausted %v", c.reached, c.exhausted)
}

// TestObserverCountsEachRecordOnce: every record is reported once per status it reaches, after
// the commit: the reconciler's retries through unavailable are not reported again, a record it
// recovers is reported under success, one it gives up on as exhausted; the backlog counts what
// waits for the reconciler.
func TestObserverCountsEachRecordOnce(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		now := time.Now()
		var mu sync.Mutex
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
		e := newEnv(t, tg, Config{ThrottleLimit: 100, Reconcile: ReconcileConfig{MaxRetries: 1, RetryAfter: time.Minute, PendingAfter: 5 * time.Minute}}, WithClock(clock))
		obs := newCounts()
		e.store.observer = obs
		op := operator("m")
		want := map[string]int{}
		check := func(step string, pending, unavailable, exhausted int) {
			t.Helper()
			obs.mu.Lock()
			for k, v := range want {
				if obs.reached[k] != v {
					t.Errorf("%s: %s reported %d times, want %d (%v)", step, k, obs.reached[k], v, obs.reached)
				}
			}
			for k, v := range obs.reached {
				if want[k] != v {
					t.Errorf("%s: %s reported %d times, want %d", step, k, v, want[k])
				}
			}
			got := obs.exhausted[SourceDashboard]
			obs.mu.Unlock()
			if got != exhausted {
				t.Errorf("%s: exhausted reported %d times, want %d", step, got, exhausted)
			}
			b, age, err := e.svc.ReconcileBacklog(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if b.Pending != pending || b.Unavailable != unavailable || b.Exhausted != exhausted || (pending+unavailable > 0) != (age > 0 || !b.Oldest.IsZero()) {
				t.Errorf("%s: backlog %+v age %v, want pending %d, unavailable %d, exhausted %d", step, b, age, pending, unavailable, exhausted)
			}
		}

		// Manual top-ups: one of each outcome.
		e.svc.Recharge(t.Context(), manual(op, "593991234567"))
		e.svc.Recharge(t.Context(), manual(op, carriertest.SubscriberNoBalance))
		e.spr.Script(carrier.FunctionTopup, carriertest.Fault("500", "SPR restarting"))
		e.svc.Recharge(t.Context(), manual(op, "593991234568"))
		e.svc.Recharge(t.Context(), manual(op, carriertest.SubscriberTimeout))
		want["dashboard/success"], want["dashboard/failed"], want["dashboard/unavailable"] = 1, 1, 2

		// Webhook deliveries: a refused invoice, a repetition of it (a record of its own), an
		// ignored e-mail.
		amount := decimal.RequireFromString("7.00")
		inv := WebhookRequest{InvoiceNumber: "001-001-1", ProductCode: "RECCARRIER7", SubscriberID: "593991234567", Amount: &amount,
			SourceXMLHash: strings.Repeat("b", 64)}
		e.svc.Webhook(t.Context(), inv)
		e.svc.Webhook(t.Context(), inv)
		if _, err := e.svc.Ignore(t.Context(), IgnoredRequest{Reason: "not a top-up invoice"}); err != nil {
			t.Fatal(err)
		}
		want["workflow-webhook/rejected"], want["workflow-ignored/ignored"] = 2, 1
		check("outcomes", 0, 2, 0)

		// A pending record nobody finished (a crash before the outcome): reported by nothing
		// until it counts as abandoned for the backlog.
		crashed := &Transaction{ID: mustV7(), ExternalTransactionID: carrier.NewExternalTransactionID(), ExternalOperation: OperationPines,
			Source: SourceDashboard, SubscriberID: "593991234560", OfferID: "31", Quantity: 1, Canton: "1701", Status: StatusPending,
			RequestedByUserID: op.UserID, CreatedAt: dbTime(clock()), UpdatedAt: dbTime(clock())}
		if err := e.store.Insert(t.Context(), crashed, nil); err != nil {
			t.Fatal(err)
		}
		check("fresh pending", 0, 2, 0)
		advance(6 * time.Minute)
		check("abandoned pending", 1, 2, 0)

		// First pass: the faulted send is sent again and succeeds, the abandoned one is sent and
		// succeeds, the timeout is sent again and times out again (unavailable a second time,
		// not reported again).
		if rep, err := e.svc.Reconcile(t.Context()); err != nil || rep.Checked != 3 {
			t.Fatalf("first pass %+v %v", rep, err)
		}
		want["dashboard/success"] = 3
		check("first pass", 0, 1, 0)

		// Second pass: the timeout's retries are spent and the carrier does not have it.
		advance(2 * time.Minute)
		if rep, err := e.svc.Reconcile(t.Context()); err != nil || rep.Exhausted != 1 {
			t.Fatalf("second pass %+v %v", rep, err)
		}
		check("exhausted", 0, 0, 1)

		// Later passes and queries change nothing that was reported.
		advance(2 * time.Minute)
		if _, err := e.svc.Reconcile(t.Context()); err != nil {
			t.Fatal(err)
		}
		check("third pass", 0, 0, 1)
	})
}
