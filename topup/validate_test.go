package topup

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// TestWebhookAmountRule: amount is required, positive and bounded. The bounds are checked
// without arithmetic, so an amount with an extreme exponent is refused at once instead of
// holding the request while a comparison rescales it to a billion digits.
func TestWebhookAmountRule(t *testing.T) {
	cases := []struct {
		name, amount string // "" means absent
		problem      string // "" means the amount passes
	}{
		{"mapped amount", "5.00", ""},
		{"three decimals", "5.009", ""},
		{"largest accepted", "99999999999.99", ""},
		{"absent", "", "is required"},
		{"zero", "0", "must be a positive number"},
		{"zero with a huge exponent", "0e999999999", "must be a positive number"},
		{"negative", "-5", "must be a positive number"},
		{"10^11", "100000000000", "is too large"},
		{"huge exponent", "1e999999999", "is too large"},
		{"huge negative exponent", "1e-999999999", "must have at most 20 decimal places"},
		{"21 decimals", "5." + strings.Repeat("0", 21), "must have at most 20 decimal places"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := WebhookRequest{InvoiceNumber: "1", ProductCode: "RECCARRIER5", SubscriberID: "593991234567", SourceXMLHash: "h"}
			if c.amount != "" {
				d := decimal.RequireFromString(c.amount)
				r.Amount = &d
			}
			fields, ok := r.validate()
			var got string
			for _, f := range fields {
				if f.Field == "amount" {
					got = f.Message
				}
			}
			if got != c.problem || ok["amount"] != (c.problem == "") {
				t.Fatalf("amount %q: problem %q (ok %v), want %q", c.amount, got, ok["amount"], c.problem)
			}
		})
	}
}

// TestInvalidRequestsAreValidationErrors: the service, called from Go, refuses a request that
// breaks a field rule with a *ValidationError naming the field, before anything reaches the
// carrier (a webhook's is also recorded rejected, which TestWebhook checks).
func TestInvalidRequestsAreValidationErrors(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, Config{ThrottleLimit: 100})
		op := operator("invalid")
		manualWith := func(change func(*ManualRequest)) func() error {
			return func() error {
				r := manual(op, "593991234567")
				change(&r)
				_, err := e.svc.Recharge(t.Context(), r)
				return err
			}
		}
		minusOne := decimal.RequireFromString("-1")
		cases := []struct {
			name  string
			call  func() error
			field string
		}{
			{"manual, quantity 0", manualWith(func(r *ManualRequest) { r.Quantity = 0 }), "quantity"},
			{"manual, quantity above the maximum", manualWith(func(r *ManualRequest) { r.Quantity = MaxQuantity + 1 }), "quantity"},
			{"manual, subscriber of another carrier", manualWith(func(r *ManualRequest) { r.SubscriberID = "593771234567" }), "subscriber_id"},
			{"manual, subscriber with a blank", manualWith(func(r *ManualRequest) { r.SubscriberID = " 593991234567" }), "subscriber_id"},
			{"manual, no offer", manualWith(func(r *ManualRequest) { r.OfferID = "" }), "offer_id"},
			{"manual, unknown operation", manualWith(func(r *ManualRequest) { r.ExternalOperation = "RECARGA_OTRA" }), "external_operation"},
			{"manual, canton of 3 digits", manualWith(func(r *ManualRequest) { r.Canton = "170" }), "canton"},
			{"webhook, negative amount", func() error {
				_, err := e.svc.Webhook(t.Context(), WebhookRequest{
					InvoiceNumber: "001-001-000000777", ProductCode: "RECCARRIER5", SubscriberID: "593991234567",
					Amount: &minusOne, SourceXMLHash: "negative-amount", Payload: []byte(`{}`),
				})
				return err
			}, "amount"},
			{"query, no offer", func() error {
				_, err := e.svc.QueryRecharge(t.Context(), QueryRequest{ExternalTransactionID: "X"})
				return err
			}, "offer_id"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				calls := e.spr.Calls(carrier.FunctionTopup) + e.spr.Calls(carrier.FunctionQueryRecharge)
				err := c.call()
				var ve *ValidationError
				if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidRequest) {
					t.Fatalf("err = %T %v, want *ValidationError", err, err)
				}
				if len(ve.Fields) != 1 || ve.Fields[0].Field != c.field {
					t.Fatalf("fields = %+v, want one problem about %s", ve.Fields, c.field)
				}
				if e.spr.Calls(carrier.FunctionTopup)+e.spr.Calls(carrier.FunctionQueryRecharge) != calls {
					t.Fatal("an invalid request reached the carrier")
				}
			})
		}
	})
}
