package topup

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"
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
