package topup

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func TestDefaultProductsAreTheSpecificationTable(t *testing.T) {
	want := []struct {
		code, offer string
		op          Operation
		amount      string
	}{
		{"RECCARRIER3", "31", OperationPines, "3.00"},
		{"RECCARRIER5", "30", OperationPines, "5.00"},
		{"RECCARRIER10", "151", OperationPines, "10.00"},
		{"RECCARRIERDATOS3", "150", OperationDatos, "3.00"},
		{"RECCARRIERDATOS5", "150", OperationDatos, "5.00"},
	}
	p := DefaultProducts()
	if len(p.All()) != len(want) {
		t.Fatalf("%d rows, want %d", len(p.All()), len(want))
	}
	for _, w := range want {
		r, ok := p.Lookup(w.code)
		if !ok || r.OfferID != w.offer || r.ExternalOperation != w.op || r.Amount.StringFixed(2) != w.amount {
			t.Errorf("%s = %+v (found %v), want offer %s %s %s", w.code, r, ok, w.offer, w.op, w.amount)
		}
	}
	if _, ok := p.Lookup("31"); ok {
		t.Error("an offer id resolved as a product code")
	}
}

func TestAmountTolerance(t *testing.T) {
	r, _ := DefaultProducts().Lookup("RECCARRIER3")
	for amount, want := range map[string]bool{
		"3": true, "3.00": true, "3.01": true, "2.99": true, "3.011": false, "3.02": false, "2.98": false, "30": false,
	} {
		if got := r.AmountMatches(decimal.RequireFromString(amount)); got != want {
			t.Errorf("AmountMatches(%s) = %v, want %v", amount, got, want)
		}
	}
}

func TestParseProducts(t *testing.T) {
	cases := []struct {
		name, json, err string
	}{
		{"valid", `[{"product_code":"RECCARRIER20","offer_id":"200","external_operation":"RECARGA_PINES","description":"Pin 20","amount":"20.00"}]`, ""},
		{"amount as number", `[{"product_code":"RECCARRIER20","offer_id":"200","external_operation":"RECARGA_PINES","amount":20}]`, ""},
		{"empty", `[]`, "empty"},
		{"not RECCARRIER", `[{"product_code":"PIN20","offer_id":"200","external_operation":"RECARGA_PINES","amount":"20"}]`, "does not start with"},
		{"no offer", `[{"product_code":"RECCARRIER20","external_operation":"RECARGA_PINES","amount":"20"}]`, "offer_id is empty"},
		{"bad operation", `[{"product_code":"RECCARRIER20","offer_id":"1","external_operation":"RECARGA","amount":"20"}]`, "external_operation"},
		{"zero amount", `[{"product_code":"RECCARRIER20","offer_id":"1","external_operation":"RECARGA_PINES","amount":"0"}]`, "positive"},
		{"twice", `[{"product_code":"RECCARRIER20","offer_id":"1","external_operation":"RECARGA_PINES","amount":"1"},{"product_code":"RECCARRIER20","offer_id":"2","external_operation":"RECARGA_PINES","amount":"1"}]`, "twice"},
		{"unknown field", `[{"product_code":"RECCARRIER20","offerid":"1"}]`, "unknown field"},
		{"not json", `product_code=1`, "invalid character"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := ParseProducts([]byte(c.json))
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := p.Lookup("RECCARRIER20"); !ok {
					t.Fatal("row not loaded")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err = %v, want it to mention %q", err, c.err)
			}
		})
	}
}

func TestRecipients(t *testing.T) {
	got := Recipients(" Branch@Example.com", "", "ops@example.com", "branch@example.com", "not an address", "OPS@example.com", "op@example.com")
	want := []string{"Branch@Example.com", "ops@example.com", "op@example.com"}
	if !equal(got, want) {
		t.Fatalf("Recipients = %v, want %v", got, want)
	}
}

func TestNotificationRecipientsByKind(t *testing.T) {
	base := Transaction{NotificationEmail: "branch@example.com", RequestedByEmail: "op@example.com"}
	for status, want := range map[Status]struct {
		kind       string
		recipients []string
	}{
		StatusSuccess:     {KindRechargeSuccess, []string{"branch@example.com", "op@example.com", "ops@example.com"}},
		StatusFailed:      {KindRechargeFailed, []string{"branch@example.com", "op@example.com", "ops@example.com"}},
		StatusUnavailable: {KindRechargeUnavailable, []string{"branch@example.com", "op@example.com", "ops@example.com"}},
		StatusRejected:    {KindRechargeInvalidInvoice, []string{"branch@example.com", "ops@example.com"}},
	} {
		tx := base
		tx.Status = status
		n, ok := notificationFor(&tx, "ops@example.com", tx.CreatedAt)
		if !ok || n.Event != want.kind || !equal(n.Recipients, want.recipients) {
			t.Errorf("%s: %v %+v, want %s to %v", status, ok, n, want.kind, want.recipients)
		}
		args, err := n.Args()
		if err != nil || args.Kind() != want.kind {
			t.Errorf("%s: args %v %v", status, args, err)
		}
	}
	for _, s := range []Status{StatusPending, StatusIgnored, StatusError} {
		tx := base
		tx.Status = s
		if _, ok := notificationFor(&tx, "ops@example.com", tx.CreatedAt); ok {
			t.Errorf("%s announced a notification", s)
		}
	}
}
