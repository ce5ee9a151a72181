package topup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// TestWebhookRefusals: decoding problems the caller reports are recorded rejected
// (INVALID_PAYLOAD) like broken rules, and a hash already recorded, under another invoice
// number or in upper case, is a duplicate (DUPLICATE_SOURCE_XML_HASH) that never reaches the
// carrier.
func TestWebhookRefusals(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, Config{})
		five := decimal.RequireFromString("5")
		req := func(invoice, hash string) WebhookRequest {
			return WebhookRequest{InvoiceNumber: invoice, ProductCode: "RECCARRIER5", SubscriberID: "593991234567", Amount: &five, SourceXMLHash: hash, Payload: []byte(`{}`)}
		}
		if _, err := e.svc.Webhook(t.Context(), req("001-001-000000001", "hash-original")); err != nil {
			t.Fatal(err)
		}
		sha := strings.Repeat("ab", 32) // a hex SHA-256, compared case-insensitively
		if _, err := e.svc.Webhook(t.Context(), req("001-001-000000004", sha)); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name   string
			req    WebhookRequest
			reason string
			check  func(t *testing.T, err error)
		}{
			{"a member of the wrong type", func() WebhookRequest {
				r := req("001-001-000000002", "hash-2")
				r.SubscriberID = ""
				r.Problems = []FieldError{{Field: "subscriber_id", Message: "must be a string"}}
				return r
			}(), ReasonInvalidPayload + ": subscriber_id: must be a string", func(t *testing.T, err error) {
				var ve *ValidationError
				if !errors.As(err, &ve) || len(ve.Fields) != 1 || ve.Fields[0].Field != "subscriber_id" {
					t.Fatalf("err = %v, want one problem about subscriber_id", err)
				}
			}},
			{"a body that is no object", WebhookRequest{Payload: []byte(`[]`), Problems: []FieldError{{Field: BodyField, Message: "must be a JSON object"}}},
				ReasonInvalidPayload + ": request body: must be a JSON object", func(t *testing.T, err error) {
					var ve *ValidationError
					if !errors.As(err, &ve) || len(ve.Fields) != 1 {
						t.Fatalf("err = %v, want the body's problem alone", err)
					}
				}},
			{"the hash under another invoice number", req("001-001-000000003", "hash-original"), ReasonDuplicate, func(t *testing.T, err error) {
				var de *DuplicateError
				if !errors.As(err, &de) || de.Reason != ReasonDuplicate || de.Original == nil || de.Original.SourceXMLHash != "hash-original" {
					t.Fatalf("err = %v, want a DUPLICATE_SOURCE_XML_HASH naming the original", err)
				}
			}},
			{"the hex SHA-256 in upper case", req("001-001-000000004", strings.ToUpper(sha)), ReasonDuplicate, func(t *testing.T, err error) {
				var de *DuplicateError
				if !errors.As(err, &de) || de.Reason != ReasonDuplicate || de.Original == nil || de.Original.SourceXMLHash != sha {
					t.Fatalf("err = %v, want a DUPLICATE_SOURCE_XML_HASH naming the lower-case original", err)
				}
			}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				calls := e.spr.Calls(carrier.FunctionTopup)
				_, err := e.svc.Webhook(t.Context(), c.req)
				c.check(t, err)
				var rec *Transaction
				var (
					ve *ValidationError
					de *DuplicateError
				)
				switch {
				case errors.As(err, &ve):
					rec = ve.Transaction
				case errors.As(err, &de):
					rec = de.Transaction
				}
				got, gerr := e.store.Get(t.Context(), rec.ID)
				if gerr != nil || got.Status != StatusRejected || !strings.HasPrefix(got.RejectionReason, c.reason) || got.SourceXMLHash != "" {
					t.Fatalf("record %+v (%v), want rejected %s without a hash", got, gerr, c.reason)
				}
				if js := e.jobsFor(t, rec.ID.String()); len(js) != 1 || js[0].Kind != KindRechargeInvalidInvoice {
					t.Fatalf("jobs = %+v", js)
				}
				if e.spr.Calls(carrier.FunctionTopup) != calls {
					t.Fatal("a refused delivery reached the carrier")
				}
			})
		}
	})
}

// TestWebhookInvoiceNumberUnderAnotherHash: idempotency is by source_xml_hash alone (the
// specification's rule), so an invoice_number already processed, delivered again under
// another hash, is processed as a new top-up: a second record holding the new hash, a second
// carrier call, no duplicate.
func TestWebhookInvoiceNumberUnderAnotherHash(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, Config{})
		five := decimal.RequireFromString("5")
		req := func(hash string) WebhookRequest {
			return WebhookRequest{InvoiceNumber: "001-001-000000123", ProductCode: "RECCARRIER5", SubscriberID: "593991234567", Amount: &five, SourceXMLHash: hash, Payload: []byte(`{}`)}
		}
		first, err := e.svc.Webhook(t.Context(), req(strings.Repeat("a", 64)))
		if err != nil {
			t.Fatal(err)
		}
		calls := e.spr.Calls(carrier.FunctionTopup)
		second, err := e.svc.Webhook(t.Context(), req(strings.Repeat("b", 64)))
		if err != nil {
			t.Fatalf("same invoice_number under another hash: err = %v, want processed", err)
		}
		if second.ID == first.ID || second.Status != StatusSuccess || second.SourceXMLHash != strings.Repeat("b", 64) || second.InvoiceNumber != first.InvoiceNumber {
			t.Fatalf("second = %+v, want a new successful record of the same invoice number with the new hash", second)
		}
		if got := e.spr.Calls(carrier.FunctionTopup); got != calls+1 {
			t.Fatalf("carrier calls = %d, want %d", got, calls+1)
		}
		if got, gerr := e.store.Get(t.Context(), first.ID); gerr != nil || got.Status != StatusSuccess || got.SourceXMLHash != strings.Repeat("a", 64) {
			t.Fatalf("first record = %+v (%v), want unchanged", got, gerr)
		}
	})
}

// TestRepeatedDeliveriesAnnounceOnce: 20 deliveries of one invoice, 19 of them concurrent
// repetitions: each repetition is recorded, and one invalid-invoice e-mail is queued for them all.
func TestRepeatedDeliveriesAnnounceOnce(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, Config{})
		five := decimal.RequireFromString("5")
		r := WebhookRequest{InvoiceNumber: "001-001-000000900", ProductCode: "RECCARRIER5", SubscriberID: "593991234567",
			Amount: &five, SourceXMLHash: "hash-repeated", NotificationEmail: "branch@example.com", Payload: []byte(`{}`)}
		if _, err := e.svc.Webhook(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 19 {
			wg.Go(func() {
				if _, err := e.svc.Webhook(context.Background(), r); !errors.Is(err, ErrDuplicateInvoice) {
					t.Errorf("repetition: %v, want ErrDuplicateInvoice", err)
				}
			})
		}
		wg.Wait()
		kinds := map[string]int{}
		for _, j := range e.jobsQueued(t) {
			kinds[j.Kind]++
		}
		if kinds[KindRechargeInvalidInvoice] != 1 || kinds[KindRechargeSuccess] != 1 {
			t.Fatalf("jobs by kind = %v, want one success and one invalid-invoice e-mail", kinds)
		}
		n, err := e.db.NewSelect().Model((*Transaction)(nil)).Where("status = ?", StatusRejected).Count(t.Context())
		if err != nil || n != 19 {
			t.Fatalf("%d repetitions recorded (%v), want 19", n, err)
		}
	})
}

// TestWebhookAmountMismatchNamesTheAmountAsSent: the rejection's words show the amount the
// invoice carried, never rounded to cents (3.014 rounded is 3.01, which would have been
// accepted), with at least two decimals; an amount within the tolerance is accepted.
func TestWebhookAmountMismatchNamesTheAmountAsSent(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, Config{})
		cases := []struct {
			name, amount string
			detail       string // "" when the invoice is accepted
		}{
			{"more decimals than cents", "3.014", "AMOUNT_MISMATCH: amount 3.014 differs from 3.00 expected for RECCARRIER3"},
			{"below by more than a cent", "2.989", "AMOUNT_MISMATCH: amount 2.989 differs from 3.00 expected for RECCARRIER3"},
			{"trailing zeros as sent", "3.0200", "AMOUNT_MISMATCH: amount 3.0200 differs from 3.00 expected for RECCARRIER3"},
			{"fewer decimals than cents", "3.5", "AMOUNT_MISMATCH: amount 3.50 differs from 3.00 expected for RECCARRIER3"},
			{"a whole number", "4", "AMOUNT_MISMATCH: amount 4.00 differs from 3.00 expected for RECCARRIER3"},
			{"within the tolerance", "3.01", ""},
		}
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				amount := decimal.RequireFromString(c.amount)
				_, err := e.svc.Webhook(t.Context(), WebhookRequest{
					InvoiceNumber: fmt.Sprintf("001-001-%09d", i+1), ProductCode: "RECCARRIER3", SubscriberID: "593991234567",
					Amount: &amount, SourceXMLHash: fmt.Sprintf("hash-amount-%d", i), Payload: []byte(`{}`),
				})
				if c.detail == "" {
					if err != nil {
						t.Fatalf("amount %s: %v, want it accepted", c.amount, err)
					}
					return
				}
				var re *RejectedError
				if !errors.As(err, &re) || re.Detail != c.detail {
					t.Fatalf("amount %s: err = %v, want detail %q", c.amount, err, c.detail)
				}
			})
		}
	})
}
