package topup

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

func TestRechargeOutcomes(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, Config{})
		cases := []struct {
			name        string
			subscriber  string
			status      Status
			retries     int
			job         string
			check       func(t *testing.T, err error)
			ledgerState string // the fake's ledger after the call; "" = no entry
		}{
			{"success", "593991234567", StatusSuccess, 0, KindRechargeSuccess, func(t *testing.T, err error) {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
			}, carrier.StatusSuccess},
			{"business error is failed", carriertest.SubscriberNoBalance, StatusFailed, 0, KindRechargeFailed, func(t *testing.T, err error) {
				var be *carrier.Error
				if !errors.As(err, &be) || be.Code != "1" {
					t.Fatalf("err = %v, want *carrier.Error code 1", err)
				}
			}, carrier.StatusError},
			{"fault 350 is unavailable", carriertest.SubscriberIPNotAuthorized, StatusUnavailable, 1, KindRechargeUnavailable, func(t *testing.T, err error) {
				if !errors.Is(err, carrier.ErrIPNotAuthorized) {
					t.Fatalf("err = %v, want ErrIPNotAuthorized", err)
				}
			}, ""},
			{"timeout is unavailable", carriertest.SubscriberTimeout, StatusUnavailable, 1, KindRechargeUnavailable, func(t *testing.T, err error) {
				if !carrier.IsTimeout(err) {
					t.Fatalf("err = %v, want a timeout", err)
				}
			}, ""},
			{"late success is unavailable until reconciled", carriertest.SubscriberLateSuccess, StatusUnavailable, 1, KindRechargeUnavailable, func(t *testing.T, err error) {
				if !carrier.IsTimeout(err) {
					t.Fatalf("err = %v, want a timeout", err)
				}
			}, carrier.StatusSuccess},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				op := operator("u-" + c.name)
				op.Email = testOperations // the operator is also operations: one e-mail, not two
				rec, err := e.svc.Recharge(t.Context(), manual(op, c.subscriber))
				c.check(t, err)
				if rec == nil {
					t.Fatal("no record returned")
				}
				var ce *CarrierError
				if c.status != StatusSuccess && (!errors.As(err, &ce) || ce.Transaction.ID != rec.ID) {
					t.Fatalf("err = %T %v, want *CarrierError carrying the record", err, err)
				}
				got, gerr := e.store.Get(t.Context(), rec.ID)
				if gerr != nil {
					t.Fatal(gerr)
				}
				if got.Status != c.status || got.RetryCount != c.retries || got.Source != SourceDashboard {
					t.Fatalf("stored status=%s retry_count=%d source=%s, want %s/%d/dashboard", got.Status, got.RetryCount, got.Source, c.status, c.retries)
				}
				if got.RawRequestXML == "" || !strings.Contains(got.RawRequestXML, got.ExternalTransactionID) {
					t.Fatalf("raw_request_xml does not hold the request: %q", got.RawRequestXML)
				}
				if c.status == StatusSuccess && (got.CarrierIDRecarga == "" || got.CarrierIDCodigo != "0") {
					t.Fatalf("success without carrier ids: %+v", got)
				}
				if c.status == StatusUnavailable && got.CarrierDiagnostic == "" {
					t.Fatal("unavailable without carrier_diagnostic")
				}
				entry, ok := e.spr.Entry(got.ExternalTransactionID)
				if (c.ledgerState == "") == ok || (ok && entry.Status != c.ledgerState) {
					t.Fatalf("ledger entry %+v (present %v), want status %q", entry, ok, c.ledgerState)
				}
				js := e.jobsFor(t, rec.ID.String())
				if len(js) != 1 || js[0].Kind != c.job || js[0].Queue != NotificationQueue {
					t.Fatalf("jobs = %+v, want one %s on %s", js, c.job, NotificationQueue)
				}
				if c.status == StatusUnavailable && js[0].Args.Message != UnavailableMessage {
					// The notification reaches the branch: never the transport error (URL, host).
					t.Fatalf("unavailable notification message %q, want the generic %q", js[0].Args.Message, UnavailableMessage)
				}
				if want := []string{testOperations}; !equal(js[0].Args.Recipients, want) {
					t.Fatalf("recipients = %v, want %v (de-duplicated)", js[0].Args.Recipients, want)
				}
				calls, err := e.store.CarrierCalls(t.Context(), rec.ID)
				if err != nil || len(calls) != 1 || calls[0].Function != carrier.FunctionTopup {
					t.Fatalf("carrier calls = %+v, %v; want the one top-up", calls, err)
				}
			})
		}
		assertNoPassword(t, e)
	})
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// assertNoPassword dumps every text column of every table the service writes and checks the
// carrier PASSWORD is in none of them.
func assertNoPassword(t *testing.T, e *env) {
	t.Helper()
	for _, q := range []string{
		"SELECT * FROM topup_transactions",
		"SELECT * FROM topup_carrier_calls",
		"SELECT * FROM river_job",
	} {
		rows, err := e.db.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		n := 0
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				var s string
				switch x := v.(type) {
				case string:
					s = x
				case []byte:
					s = string(x)
				}
				if strings.Contains(s, testCarrierPassword) {
					t.Fatalf("%s: column %s holds the carrier PASSWORD", q, cols[i])
				}
			}
			n++
		}
		rows.Close()
		if n == 0 && q != "SELECT * FROM river_job" {
			t.Fatalf("%s: no rows, the check proved nothing", q)
		}
	}
}

// The pending record is committed before the SPR is called (spec, States and transitions:
// "record inserted before the SPR call"): while the fake holds the top-up at a gate, the
// record is there and pending; released, it is success. No clock decides anything: the
// carrier timeout and failAfter only bound a broken run.
func TestPendingIsCommittedBeforeTheCarrierCall(t *testing.T) {
	const failAfter = 30 * time.Second
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnvTimeout(t, tg, Config{}, 2*failAfter)
		gate := carriertest.NewGate()
		e.spr.Script(carrier.FunctionTopup, carriertest.Process().Until(gate))
		defer gate.Open() // a failed run does not leave the call held
		done := make(chan error, 1)
		go func() {
			_, err := e.svc.Recharge(context.Background(), manual(operator("u1"), "593991234567"))
			done <- err
		}()
		select {
		case <-gate.Reached():
		case err := <-done:
			t.Fatalf("Recharge ended (%v) without the SPR holding its call", err)
		case <-time.After(failAfter):
			t.Fatal("the top-up never reached the SPR")
		}
		// The SPR has the call and has not answered: the record must already be committed.
		list, total, err := e.store.List(t.Context(), Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || total != 1 {
			t.Fatalf("%d records (total %d) while the SPR works, want the one pending record", len(list), total)
		}
		rec := list[0]
		if rec.Status != StatusPending || rec.CarrierIDRecarga != "" {
			t.Fatalf("record while the SPR works: status %s, id_recarga %q; want pending, none", rec.Status, rec.CarrierIDRecarga)
		}
		select {
		case err := <-done:
			t.Fatalf("Recharge ended (%v) before the SPR answered", err)
		default:
		}
		gate.Open()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(failAfter):
			t.Fatal("Recharge did not end after the SPR answered")
		}
		got, err := e.store.Get(t.Context(), rec.ID)
		if err != nil {
			t.Fatal(err)
		}
		entry, _ := e.spr.Entry(rec.ExternalTransactionID)
		if got.Status != StatusSuccess || entry.Status != carrier.StatusSuccess || got.CarrierIDRecarga != entry.IDRecarga {
			t.Fatalf("after the answer: record %s (id_recarga %q), ledger %+v; want success with the SPR's ID_RECARGA", got.Status, got.CarrierIDRecarga, entry)
		}
	})
}

func TestDailyLimitCountsTheGuayaquilDay(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		zone, _ := time.LoadLocation(DayZone)
		// 23:30 in Guayaquil is 04:30 UTC the next day: the UTC date must not decide.
		now := time.Date(2026, 3, 10, 23, 30, 0, 0, zone)
		var mu sync.Mutex
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		e := newEnv(t, tg, Config{DailyLimit: 2, ThrottleLimit: 100}, WithClock(clock))
		op := operator("daily")
		for i := range 2 {
			if _, err := e.svc.Recharge(t.Context(), manual(op, "593991234567")); err != nil {
				t.Fatalf("top-up %d: %v", i+1, err)
			}
		}
		if _, err := e.svc.Recharge(t.Context(), manual(op, "593991234567")); !errors.Is(err, ErrDailyLimit) {
			t.Fatalf("third top-up of the day: err = %v, want ErrDailyLimit", err)
		}
		unlimited := op
		unlimited.Unlimited = true
		if _, err := e.svc.Recharge(t.Context(), manual(unlimited, "593991234567")); err != nil {
			t.Fatalf("unlimited_recargas: %v", err)
		}
		if _, err := e.svc.Recharge(t.Context(), manual(operator("other"), "593991234567")); err != nil {
			t.Fatalf("another user: %v", err)
		}
		mu.Lock()
		now = now.Add(45 * time.Minute) // 00:15 the next day in Guayaquil
		mu.Unlock()
		if _, err := e.svc.Recharge(t.Context(), manual(op, "593991234567")); err != nil {
			t.Fatalf("first top-up of the next day: %v", err)
		}
	})
}

func TestActionTokenSingleUse(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, Config{ThrottleLimit: 100})
		r := manual(operator("tok"), "593991234567")
		if _, err := e.svc.Recharge(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Recharge(t.Context(), r); !errors.Is(err, ErrActionTokenUsed) {
			t.Fatalf("second use: err = %v, want ErrActionTokenUsed", err)
		}
		other := manual(operator("someone-else"), "593991234567")
		other.ActionToken.Subject = "tok"
		if _, err := e.svc.Recharge(t.Context(), other); !errors.Is(err, ErrActionTokenInvalid) {
			t.Fatalf("token of another user: err = %v, want ErrActionTokenInvalid", err)
		}
		// A refused request (daily limit) does not spend the token.
		e2 := newEnv(t, storagetest.SQLite(t), Config{DailyLimit: 1, ThrottleLimit: 100})
		op := operator("spent")
		if _, err := e2.svc.Recharge(t.Context(), manual(op, "593991234567")); err != nil {
			t.Fatal(err)
		}
		keep := manual(op, "593991234567")
		if _, err := e2.svc.Recharge(t.Context(), keep); !errors.Is(err, ErrDailyLimit) {
			t.Fatalf("err = %v, want ErrDailyLimit", err)
		}
		var n int
		if err := e2.db.NewSelect().Table("topup_action_tokens").ColumnExpr("count(*)").Where("jti = ?", keep.ActionToken.ID).Scan(t.Context(), &n); err != nil || n != 0 {
			t.Fatalf("token of a refused request recorded as used (%d, %v)", n, err)
		}
	})
}

func TestThrottleWindow(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
		var mu sync.Mutex
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
		e := newEnv(t, tg, Config{}, WithClock(clock))
		op := operator("u")
		op.Unlimited = true
		for i := range DefaultThrottleLimit {
			if _, err := e.svc.Recharge(t.Context(), manual(op, "593991234567")); err != nil {
				t.Fatalf("request %d: %v", i+1, err)
			}
			advance(10 * time.Second)
		}
		// Requests at 0, 10, ..., 40 s; now is 50 s: the first leaves the window at 60 s.
		refused := manual(op, "593991234567")
		_, err := e.svc.Recharge(t.Context(), refused)
		var te *ThrottleError
		if !errors.As(err, &te) || !errors.Is(err, ErrThrottled) || te.Seconds() != 10 || te.Limit != 5 || te.Window != time.Minute {
			t.Fatalf("sixth request: err = %+v, want ErrThrottled (5 per 60 s) with 10 s to wait", err)
		}
		if _, err := e.svc.Recharge(t.Context(), manual(operator("v"), "593991234567")); err != nil {
			t.Fatalf("another user is throttled by u's requests: %v", err)
		}
		advance(10 * time.Second)
		// The refused request spent neither its place nor its token.
		if _, err := e.svc.Recharge(t.Context(), refused); err != nil {
			t.Fatalf("after the oldest left the window, with the refused request's token: %v", err)
		}
	})
}

func TestWebhook(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, Config{})
		amount := func(s string) *decimal.Decimal { d := decimal.RequireFromString(s); return &d }
		hash := func(c byte) string { return strings.Repeat(string(c), 64) }
		req := func(h, product, amt, subscriber string) WebhookRequest {
			return WebhookRequest{
				// One invoice number for every delivery, as in the specification's example:
				// idempotency is by source_xml_hash alone, so each fresh hash is a new invoice.
				InvoiceNumber: "001-001-000000123", InvoiceCode: "FAC-1", ProductCode: product, SubscriberID: subscriber,
				Amount: amount(amt), NotificationEmail: "branch@example.com", SourceXMLHash: h,
				Payload: []byte(`{"invoice_number":"001-001-000000123","note":"payload kept"}`),
			}
		}

		t.Run("processed with fallback canton", func(t *testing.T) {
			rec, err := e.svc.Webhook(t.Context(), req(hash('a'), "RECCARRIER5", "5.00", "593991234567"))
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status != StatusSuccess || rec.OfferID != "30" || rec.ExternalOperation != OperationPines || rec.Quantity != 1 || rec.Canton != DefaultCanton {
				t.Fatalf("record = %+v", rec)
			}
			got, _ := e.store.Get(t.Context(), rec.ID)
			if got.SourcePayload != `{"invoice_number":"001-001-000000123","note":"payload kept"}` || got.SourceXMLHash != hash('a') {
				t.Fatalf("payload %q hash %q", got.SourcePayload, got.SourceXMLHash)
			}
			js := e.jobsFor(t, rec.ID.String())
			if len(js) != 1 || js[0].Kind != KindRechargeSuccess || !equal(js[0].Args.Recipients, []string{"branch@example.com", testOperations}) {
				t.Fatalf("jobs = %+v", js)
			}
		})
		t.Run("carrier failure is still processed", func(t *testing.T) {
			rec, err := e.svc.Webhook(t.Context(), req(hash('b'), "RECCARRIERDATOS3", "3", carriertest.SubscriberNoBalance))
			if err != nil || rec.Status != StatusFailed {
				t.Fatalf("rec=%+v err=%v, want failed and no error", rec, err)
			}
		})
		t.Run("duplicate", func(t *testing.T) {
			calls := e.spr.Calls(carrier.FunctionTopup)
			_, err := e.svc.Webhook(t.Context(), req(strings.ToUpper(hash('a')), "RECCARRIER5", "5.00", "593991234567"))
			var de *DuplicateError
			if !errors.As(err, &de) || !errors.Is(err, ErrDuplicateInvoice) || de.Original == nil || de.Transaction == nil {
				t.Fatalf("err = %v, want *DuplicateError", err)
			}
			if e.spr.Calls(carrier.FunctionTopup) != calls {
				t.Fatal("a duplicate reached the carrier")
			}
			if de.Transaction.Status != StatusRejected || !strings.HasPrefix(de.Transaction.RejectionReason, ReasonDuplicate) {
				t.Fatalf("duplicate record = %+v", de.Transaction)
			}
			js := e.jobsFor(t, de.Transaction.ID.String())
			if len(js) != 1 || js[0].Kind != KindRechargeInvalidInvoice {
				t.Fatalf("jobs = %+v, want recharge-invalid-invoice", js)
			}
		})
		rejected := []struct {
			name, product, amount, reason string
		}{
			{"no mapping", "RECCARRIER7", "7.00", ReasonProductNotMapped},
			{"amount mismatch", "RECCARRIER3", "3.02", ReasonAmountMismatch},
		}
		for i, c := range rejected {
			t.Run(c.name, func(t *testing.T) {
				_, err := e.svc.Webhook(t.Context(), req(hash(byte('c'+i)), c.product, c.amount, "593991234567"))
				var re *RejectedError
				if !errors.As(err, &re) || !errors.Is(err, ErrRejected) {
					t.Fatalf("err = %v, want *RejectedError", err)
				}
				got, gerr := e.store.Get(t.Context(), re.Transaction.ID)
				if gerr != nil || got.Status != StatusRejected || got.RejectionReason != c.reason || !strings.HasPrefix(re.Detail, c.reason+": ") {
					t.Fatalf("record = %+v (%v), detail %q, want rejected %s", got, gerr, re.Detail, c.reason)
				}
				js := e.jobsFor(t, re.Transaction.ID.String())
				if len(js) != 1 || js[0].Kind != KindRechargeInvalidInvoice || !equal(js[0].Args.Recipients, []string{"branch@example.com", testOperations}) ||
					js[0].Args.Message != re.Detail {
					t.Fatalf("jobs = %+v", js)
				}
			})
		}
		t.Run("amount within 0.01", func(t *testing.T) {
			rec, err := e.svc.Webhook(t.Context(), req(hash('f'), "RECCARRIER3", "3.01", "593991234567"))
			if err != nil || rec.Status != StatusSuccess {
				t.Fatalf("rec=%+v err=%v", rec, err)
			}
		})
		t.Run("invalid payload is recorded rejected", func(t *testing.T) {
			r := req("not a hash", "PIN3", "-1", "0991234567")
			r.Payload = []byte(`{"bad":"\u0000"}`)
			_, err := e.svc.Webhook(t.Context(), r)
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Transaction == nil {
				t.Fatalf("err = %v, want *ValidationError with a record", err)
			}
			fields := map[string]bool{}
			for _, f := range ve.Fields {
				fields[f.Field] = true
			}
			for _, f := range []string{"source_xml_hash", "product_code", "amount", "subscriber_id"} {
				if !fields[f] {
					t.Fatalf("no problem reported for %s: %+v", f, ve.Fields)
				}
			}
			got, gerr := e.store.Get(t.Context(), ve.Transaction.ID)
			if gerr != nil || got.Status != StatusRejected || !strings.HasPrefix(got.RejectionReason, ReasonInvalidPayload) || got.SourceXMLHash != "" {
				t.Fatalf("record = %+v, %v", got, gerr)
			}
		})
	})
}

func TestIgnore(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, Config{})
		rec, err := e.svc.Ignore(t.Context(), IgnoredRequest{Reason: "not a top-up invoice", InvoiceNumber: "001-002-3", Payload: []byte(`{"reason":"not a top-up invoice"}`)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.store.Get(t.Context(), rec.ID)
		if err != nil || got.Status != StatusIgnored || got.Source != SourceWorkflowIgnored || got.IgnoredReason != "not a top-up invoice" || got.SourcePayload == "" {
			t.Fatalf("record = %+v, %v", got, err)
		}
		if e.spr.Calls(carrier.FunctionTopup) != 0 || len(e.jobsQueued(t)) != 0 {
			t.Fatal("an ignored e-mail called the carrier or enqueued a notification")
		}
		if _, err := e.svc.Ignore(t.Context(), IgnoredRequest{}); !errors.Is(err, ErrInvalidRequest) {
			t.Fatalf("no reason: err = %v, want ErrInvalidRequest", err)
		}
	})
}

func TestQueryRecharge(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, Config{ThrottleLimit: 100})
		op := operator("q")

		t.Run("late success", func(t *testing.T) {
			rec, _ := e.svc.Recharge(t.Context(), manual(op, carriertest.SubscriberLateSuccess))
			res, err := e.svc.QueryRecharge(t.Context(), QueryRequest{ExternalTransactionID: rec.ExternalTransactionID, OfferID: rec.OfferID})
			if err != nil || !res.RemoteSuccess || !res.Changed || res.PreviousStatus != StatusUnavailable || res.Transaction.Status != StatusSuccess {
				t.Fatalf("res=%+v err=%v", res, err)
			}
			js := e.jobsFor(t, rec.ID.String())
			if len(js) != 2 || js[1].Kind != KindRechargeSuccess {
				t.Fatalf("jobs = %+v, want unavailable then success", js)
			}
		})
		t.Run("failed needs the business to confirm", func(t *testing.T) {
			e.spr.Script(carrier.FunctionTopup, carriertest.BusinessError("1", "no balance").After(0))
			// The fake recorded ERROR; make the carrier say SUCCESS on the query by scripting it.
			rec, _ := e.svc.Recharge(t.Context(), manual(op, "593991234568"))
			if rec.Status != StatusFailed {
				t.Fatalf("status = %s", rec.Status)
			}
			successAnswer := `<?xml version="1.0"?><umsprot version="1"><exec_rsp result="0" diagnostic="OK"><data name="MENSAJE">top-up found</data><data name="ID_RECARGA">77</data><data name="ID_CODIGO">0</data><data name="STATUS">SUCCESS</data></exec_rsp></umsprot>`
			e.spr.Script(carrier.FunctionQueryRecharge, carriertest.Raw(200, successAnswer), carriertest.Raw(200, successAnswer))
			res, err := e.svc.QueryRecharge(t.Context(), QueryRequest{ExternalTransactionID: rec.ExternalTransactionID, OfferID: rec.OfferID})
			if err != nil || !res.RemoteSuccess || res.Changed || res.Transaction.Status != StatusFailed || res.Note == "" {
				t.Fatalf("without confirmation: res=%+v err=%v", res, err)
			}
			res, err = e.svc.QueryRecharge(t.Context(), QueryRequest{ExternalTransactionID: rec.ExternalTransactionID, OfferID: rec.OfferID, ChargeConfirmed: true})
			if err != nil || !res.Changed || res.Transaction.Status != StatusSuccess || res.Transaction.CarrierIDRecarga != "77" {
				t.Fatalf("with confirmation: res=%+v err=%v", res, err)
			}
		})
		t.Run("remote error on a success is an incident", func(t *testing.T) {
			rec, err := e.svc.Recharge(t.Context(), manual(op, "593991234569"))
			if err != nil {
				t.Fatal(err)
			}
			// Asked with another offer, the carrier's ERROR is about another pair: no incident.
			res, err := e.svc.QueryRecharge(t.Context(), QueryRequest{ExternalTransactionID: rec.ExternalTransactionID, OfferID: "999"})
			if err != nil || res.RemoteSuccess || res.Changed || res.Transaction.Incident || res.Note == "" {
				t.Fatalf("another offer: res=%+v err=%v, want the record untouched", res, err)
			}
			if got, _ := e.store.Get(t.Context(), rec.ID); got.Incident {
				t.Fatalf("another offer flagged an incident: %+v", got)
			}
			e.spr.Script(carrier.FunctionQueryRecharge, carriertest.BusinessError("1", "transaction not found"))
			res, err = e.svc.QueryRecharge(t.Context(), QueryRequest{ExternalTransactionID: rec.ExternalTransactionID, OfferID: rec.OfferID})
			if err != nil || res.RemoteSuccess || res.Transaction.Status != StatusSuccess || !res.Transaction.Incident {
				t.Fatalf("res=%+v err=%v, want success kept with the incident flagged", res, err)
			}
			got, _ := e.store.Get(t.Context(), rec.ID)
			if got.Status != StatusSuccess || !got.Incident || got.IncidentNote == "" {
				t.Fatalf("stored = %+v", got)
			}
		})
		t.Run("unknown id answers the carrier", func(t *testing.T) {
			res, err := e.svc.QueryRecharge(t.Context(), QueryRequest{ExternalTransactionID: "NOPE", OfferID: "31"})
			if err != nil || res.RemoteSuccess || res.Transaction != nil || res.Remote.Mensaje != carriertest.MessageNotFound {
				t.Fatalf("res=%+v err=%v", res, err)
			}
		})
		t.Run("carrier unreachable", func(t *testing.T) {
			e.spr.Script(carrier.FunctionQueryRecharge, carriertest.Fault("500", "down"))
			_, err := e.svc.QueryRecharge(t.Context(), QueryRequest{ExternalTransactionID: "X", OfferID: "31"})
			var ce *CarrierError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want *CarrierError", err)
			}
		})
		assertNoPassword(t, e)
	})
}

func TestReconcile(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		now := time.Now()
		var mu sync.Mutex
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
		e := newEnv(t, tg, Config{ThrottleLimit: 100, Reconcile: ReconcileConfig{MaxRetries: 2, RetryAfter: time.Minute, PendingAfter: 5 * time.Minute}}, WithClock(clock))
		op := operator("r")

		late, _ := e.svc.Recharge(t.Context(), manual(op, carriertest.SubscriberLateSuccess))
		e.spr.Script(carrier.FunctionTopup, carriertest.Fault("500", "SPR restarting"))
		retried, _ := e.svc.Recharge(t.Context(), manual(op, "593991234567"))
		stuck, _ := e.svc.Recharge(t.Context(), manual(op, carriertest.SubscriberTimeout))
		for _, r := range []*Transaction{late, retried, stuck} {
			if r.Status != StatusUnavailable || r.RetryCount != 1 {
				t.Fatalf("setup: %s is %s/%d, want unavailable/1", r.SubscriberID, r.Status, r.RetryCount)
			}
		}
		// A crash between the commit and the outcome: a pending record nobody finishes.
		crashed := &Transaction{ID: mustV7(), ExternalTransactionID: carrier.NewExternalTransactionID(), ExternalOperation: OperationPines,
			Source: SourceDashboard, SubscriberID: "593991234560", OfferID: "31", Quantity: 1, Canton: "1701", Status: StatusPending,
			RequestedByUserID: op.UserID, CreatedAt: dbTime(now), UpdatedAt: dbTime(now)}
		if err := e.store.Insert(t.Context(), crashed, nil); err != nil {
			t.Fatal(err)
		}

		// Too early: nothing is old enough.
		if rep, err := e.svc.Reconcile(t.Context()); err != nil || rep.Checked != 0 {
			t.Fatalf("early pass: %+v %v", rep, err)
		}
		advance(2 * time.Minute)
		rep, err := e.svc.Reconcile(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Checked != 3 || rep.Succeeded != 2 || rep.Retried != 2 || rep.Unresolved != 1 {
			t.Fatalf("first pass = %+v, want 3 checked (pending not yet stale), late success + retry success, timeout retried unresolved", rep)
		}
		get := func(r *Transaction) *Transaction {
			got, err := e.store.Get(t.Context(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		if g := get(late); g.Status != StatusSuccess || g.RetryCount != 1 {
			t.Fatalf("late success: %s/%d, want success/1", g.Status, g.RetryCount)
		}
		if entry, _ := e.spr.Entry(late.ExternalTransactionID); entry.Calls != 1 {
			t.Fatalf("late success sent again to the carrier (%d calls)", entry.Calls)
		}
		g := get(retried)
		if g.Status != StatusSuccess || g.RetryCount != 1 || g.ExternalTransactionID != retried.ExternalTransactionID {
			t.Fatalf("retried: %+v", g)
		}
		if g := get(stuck); g.Status != StatusUnavailable || g.RetryCount != 2 {
			t.Fatalf("timeout retried: %s/%d, want unavailable/2", g.Status, g.RetryCount)
		}
		if g := get(crashed); g.Status != StatusPending {
			t.Fatalf("fresh pending touched: %s", g.Status)
		}

		advance(4 * time.Minute)
		rep, err = e.svc.Reconcile(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Checked != 2 || rep.Retried != 2 || rep.Succeeded != 1 || rep.Unresolved != 1 {
			t.Fatalf("second pass = %+v", rep)
		}
		if g := get(crashed); g.Status != StatusSuccess || g.RetryCount != 0 {
			t.Fatalf("abandoned pending: %s/%d, want success/0", g.Status, g.RetryCount)
		}
		if g := get(stuck); g.Status != StatusUnavailable || g.RetryCount != 3 {
			t.Fatalf("timeout: %s/%d, want unavailable/3", g.Status, g.RetryCount)
		}
		advance(2 * time.Minute)
		topups := e.spr.Calls(carrier.FunctionTopup)
		rep, err = e.svc.Reconcile(t.Context())
		if err != nil || rep.Exhausted != 1 || rep.Retried != 0 {
			t.Fatalf("third pass = %+v %v, want the timeout exhausted", rep, err)
		}
		if e.spr.Calls(carrier.FunctionTopup) != topups {
			t.Fatal("an exhausted top-up was sent again")
		}
		if g := get(stuck); g.Status != StatusUnavailable {
			t.Fatalf("exhausted timeout marked %s without the carrier's word", g.Status)
		}
		kinds := map[string]int{}
		for _, j := range e.jobsQueued(t) {
			kinds[j.Kind]++
		}
		// One e-mail per record per kind: unavailable once for each of the 3 (the timeout's later
		// passes through unavailable repeat nothing); success: late, retried, crashed.
		if kinds[KindRechargeUnavailable] != 3 || kinds[KindRechargeSuccess] != 3 {
			t.Fatalf("jobs by kind = %v", kinds)
		}
		assertNoPassword(t, e)
	})
}

func TestReconcilersClaimEachRecordOnce(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		now := time.Now()
		var mu sync.Mutex
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		e := newEnv(t, tg, Config{ThrottleLimit: 100}, WithClock(clock))
		var setup sync.WaitGroup
		for range 5 {
			r := manual(operator("c"), carriertest.SubscriberLateSuccess)
			setup.Go(func() { _, _ = e.svc.Recharge(context.Background(), r) })
		}
		setup.Wait()
		mu.Lock()
		now = now.Add(10 * time.Minute)
		mu.Unlock()
		var wg sync.WaitGroup
		reps := make([]ReconcileReport, 4)
		for i := range reps {
			wg.Go(func() {
				var err error
				reps[i], err = e.svc.Reconcile(context.Background())
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		checked, succeeded := 0, 0
		for _, r := range reps {
			checked += r.Checked
			succeeded += r.Succeeded
		}
		if checked != 5 || succeeded != 5 || e.spr.Calls(carrier.FunctionQueryRecharge) != 5 {
			t.Fatalf("checked %d, succeeded %d, queries %d; want 5 each", checked, succeeded, e.spr.Calls(carrier.FunctionQueryRecharge))
		}
	})
}

// TestReconcileRetriesExhaustedLeaveTheSelection: an unavailable record whose retries are spent
// is asked about once more (a late success of its last send is still found) and, when the
// carrier does not have it, marked retries_exhausted_at and never selected again. Before, it
// was claimed and queried every RetryAfter, forever. A carrier that does not answer keeps the
// record selected.
func TestReconcileRetriesExhaustedLeaveTheSelection(t *testing.T) {
	lateSuccess := `<?xml version="1.0"?><umsprot version="1"><exec_rsp result="0" diagnostic="OK"><data name="MENSAJE">top-up found</data><data name="ID_RECARGA">88</data><data name="ID_CODIGO">0</data><data name="STATUS">SUCCESS</data></exec_rsp></umsprot>`
	cases := []struct {
		name string
		// queries are the scripted answers to the reconciler's queries, pass by pass (an
		// empty string: the fake answers from its ledger).
		subscriber string
		queries    []carriertest.Reaction
		// want after the last pass
		status     Status
		retryCount int
		exhausted  bool
		// the last pass must not query the carrier at all
		lastPassQueries int
	}{
		{"carrier does not have it: exhausted, then left alone", carriertest.SubscriberTimeout, nil, StatusUnavailable, 2, true, 0},
		{"last send's late success is found", carriertest.SubscriberLateSuccess, []carriertest.Reaction{
			carriertest.BusinessError("1", carriertest.MessageNotFound), carriertest.Raw(200, lateSuccess),
		}, StatusSuccess, 2, false, 0},
		{"carrier never answers: still selected", carriertest.SubscriberTimeout, []carriertest.Reaction{
			carriertest.BusinessError("1", carriertest.MessageNotFound), carriertest.Fault("500", "down"), carriertest.Fault("500", "down"), carriertest.Fault("500", "down"),
		}, StatusUnavailable, 2, false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
				now := time.Now()
				var mu sync.Mutex
				clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
				advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
				e := newEnv(t, tg, Config{Reconcile: ReconcileConfig{MaxRetries: 1, RetryAfter: time.Minute}}, WithClock(clock))
				// The first send is lost (fault): unavailable, retry_count 1.
				e.spr.Script(carrier.FunctionTopup, carriertest.Fault("500", "SPR restarting"))
				rec, _ := e.svc.Recharge(t.Context(), manual(operator("x"), c.subscriber))
				if rec == nil || rec.Status != StatusUnavailable || rec.RetryCount != 1 {
					t.Fatalf("setup: %+v", rec)
				}
				if len(c.queries) > 0 {
					e.spr.Script(carrier.FunctionQueryRecharge, c.queries...)
				}
				var queriesBefore int
				for pass := range 4 {
					advance(2 * time.Minute)
					queriesBefore = e.spr.Calls(carrier.FunctionQueryRecharge)
					if _, err := e.svc.Reconcile(t.Context()); err != nil {
						t.Fatalf("pass %d: %v", pass, err)
					}
				}
				if n := e.spr.Calls(carrier.FunctionQueryRecharge) - queriesBefore; n != c.lastPassQueries {
					t.Fatalf("the last pass queried the carrier %d times, want %d", n, c.lastPassQueries)
				}
				got, err := e.store.Get(t.Context(), rec.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != c.status || got.RetryCount != c.retryCount || got.RetriesExhaustedAt.IsZero() == c.exhausted {
					t.Fatalf("record %s retry_count %d retries_exhausted_at %v; want %s, %d, exhausted %v",
						got.Status, got.RetryCount, got.RetriesExhaustedAt, c.status, c.retryCount, c.exhausted)
				}
				// Whatever happened, the top-up was sent at most 1 + MaxRetries times.
				if n := e.spr.Calls(carrier.FunctionTopup); n > 2 {
					t.Fatalf("%d sends, want at most 2", n)
				}
			})
		})
	}
}

// TestReconcileLeaseOutlivesTheCalls: a pass that claimed a record and still waits for the
// carrier keeps it, even when the record's RetryAfter passes meanwhile: a second pass (another
// instance) does not take it, so one top-up is never queried or sent twice at once.
func TestReconcileLeaseOutlivesTheCalls(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		now := time.Now()
		var mu sync.Mutex
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
		e := newEnv(t, tg, Config{ThrottleLimit: 100, Reconcile: ReconcileConfig{RetryAfter: time.Minute, Lease: 5 * time.Minute}}, WithClock(clock))
		rec, err := e.svc.Recharge(context.Background(), manual(operator("lease"), carriertest.SubscriberTimeout))
		if !errors.As(err, new(*CarrierError)) || rec.Status != StatusUnavailable {
			t.Fatalf("setup: %v %v", rec, err)
		}
		gate := carriertest.NewGate()
		e.spr.Script(carrier.FunctionQueryRecharge, carriertest.Process().Until(gate))
		advance(2 * time.Minute)
		first := make(chan ReconcileReport)
		go func() {
			rep, _ := e.svc.Reconcile(context.Background())
			first <- rep
		}()
		<-gate.Reached()
		advance(2 * time.Minute) // past RetryAfter again, within the lease
		second, err := e.svc.Reconcile(context.Background())
		if err != nil || second.Checked != 0 {
			t.Fatalf("a second pass took the leased record: %+v %v", second, err)
		}
		gate.Open()
		if rep := <-first; rep.Checked != 1 {
			t.Fatalf("first pass %+v", rep)
		}
		if n := e.spr.Calls(carrier.FunctionQueryRecharge); n != 1 {
			t.Fatalf("%d queries, want 1", n)
		}
		advance(10 * time.Minute) // past the lease: the record is selectable again
		if rep, err := e.svc.Reconcile(context.Background()); err != nil || rep.Checked != 1 {
			t.Fatalf("after the lease: %+v %v", rep, err)
		}
	})
}
