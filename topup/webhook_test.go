package topup

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// TestWebhookRefusals: decoding problems the caller reports are recorded rejected
// (INVALID_PAYLOAD) like broken rules, and an invoice number already recorded under another
// hash is a duplicate (DUPLICATE_INVOICE_NUMBER) that never reaches the carrier.
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
			{"the invoice number under another hash", req("001-001-000000001", "hash-other"), ReasonDuplicateInvoice, func(t *testing.T, err error) {
				var de *DuplicateError
				if !errors.As(err, &de) || de.Reason != ReasonDuplicateInvoice || de.Original == nil || de.Original.SourceXMLHash != "hash-original" {
					t.Fatalf("err = %v, want a DUPLICATE_INVOICE_NUMBER naming the original", err)
				}
			}},
			{"the hash under another invoice number", req("001-001-000000003", "hash-original"), ReasonDuplicate, func(t *testing.T, err error) {
				var de *DuplicateError
				if !errors.As(err, &de) || de.Reason != ReasonDuplicate {
					t.Fatalf("err = %v, want a DUPLICATE_SOURCE_XML_HASH", err)
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
