package topup_test

import (
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/topup"
)

func ExampleProducts_Lookup() {
	p := topup.DefaultProducts()
	r, _ := p.Lookup("RECCARRIERDATOS5")
	fmt.Println(r.OfferID, r.ExternalOperation, r.Amount.StringFixed(2))
	fmt.Println(r.AmountMatches(decimal.RequireFromString("5.01")), r.AmountMatches(decimal.RequireFromString("5.02")))
	// Output:
	// 150 RECARGA_DATOS 5.00
	// true false
}

func ExampleTransaction_Succeed() {
	t := &topup.Transaction{Status: topup.StatusPending}
	_ = t.MakeUnavailable(topup.CarrierReply{Diagnostic: "timeout"})
	fmt.Println(t.Status, t.RetryCount)
	err := t.Succeed(topup.CarrierReply{})
	fmt.Println(errors.Is(err, topup.ErrInvalidTransition), err)
	_ = t.Retry()
	_ = t.Succeed(topup.CarrierReply{IDRecarga: "700000001", IDCodigo: "0"})
	fmt.Println(t.Status, t.CarrierIDRecarga)
	err = t.Fail(topup.CarrierReply{})
	fmt.Println(errors.Is(err, topup.ErrFinal))
	// Output:
	// unavailable 1
	// true topup: transition unavailable -> success not allowed
	// success 700000001
	// true
}

func ExampleRecipients() {
	fmt.Println(topup.Recipients("Sucursal@example.com", "", "ops@example.com", "sucursal@EXAMPLE.com"))
	// Output: [Sucursal@example.com ops@example.com]
}
