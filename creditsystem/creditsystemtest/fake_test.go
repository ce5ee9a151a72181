package creditsystemtest_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
)

var fixedNow = time.Date(2025, 3, 10, 15, 4, 5, 0, time.UTC)

const (
	cliente = "0912345678"
	invoice = "001-002-000000123"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func newFake(t *testing.T, timeout time.Duration, opts ...creditsystemtest.Option) (*creditsystemtest.Server, *creditsystem.Client) {
	t.Helper()
	opts = append([]creditsystemtest.Option{creditsystemtest.WithClock(func() time.Time { return fixedNow })}, opts...)
	srv := creditsystemtest.NewServer(opts...)
	t.Cleanup(srv.Close)
	cfg := srv.Config()
	cfg.Timeout = timeout
	c, err := creditsystem.New(cfg, creditsystem.WithHTTPClient(checkedHTTPClient(t, srv)))
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func authReq(ident, monto string) creditsystem.GrabarAutorizacionRequest {
	return creditsystem.GrabarAutorizacionRequest{Identificacion: ident, CodigoProducto: "001", Plazo: 6, Monto: d(monto), PuntoVenta: "PV-1"}
}

// pagoReq is a complete cash payment of valor.
func pagoReq(card, valor string) creditsystem.GrabarPagoTarjetaRequest {
	return creditsystem.GrabarPagoTarjetaRequest{NumeroTarjeta: card, ValorPago: d(valor), FechaPago: creditsystem.NewDate(2025, 3, 10),
		FormasPago: []creditsystem.FormaPago{{Codigo: creditsystem.FormaPagoEfectivo, Valor: d(valor)}}}
}

func consumoReq(auth, ident, factura, monto, otp string) creditsystem.GrabarConsumoRequest {
	return creditsystem.GrabarConsumoRequest{NumeroAutorizacion: auth, NumeroFactura: factura, MontoFacturado: d(monto),
		FechaFactura: creditsystem.NewDate(2025, 3, 10), Identificacion: ident, Plazo: 6, Monto: d(monto), Otp: otp}
}

func disponible(t *testing.T, srv *creditsystemtest.Server, card string) string {
	t.Helper()
	c, ok := srv.Card(card)
	if !ok {
		t.Fatalf("card %s not opened", card)
	}
	return c.Disponible.StringFixed(2)
}

func businessCode(err error) int {
	var be *creditsystem.Error
	if errors.As(err, &be) {
		return be.Code
	}
	return -1
}

// The magic values of the design, each from the client as the credit service sends them.
func TestMagicValues(t *testing.T) {
	t.Run("identificacion 0000000002 is a customer without card", func(t *testing.T) {
		_, c := newFake(t, 2*time.Second)
		ctx := t.Context()
		_, err1 := c.ConsultarTarjeta(ctx, creditsystem.ConsultarTarjetaRequest{Identificacion: creditsystemtest.IdentificacionCardNotFound})
		_, err2 := c.GrabarAutorizacion(ctx, authReq(creditsystemtest.IdentificacionCardNotFound, "10.00"))
		_, err3 := c.ConsultarDeudaTarjeta(ctx, creditsystem.ConsultarDeudaTarjetaRequest{NumeroIdentificacion: creditsystemtest.IdentificacionCardNotFound})
		_, err4 := c.ConsultarAlternativaFinanciacion(ctx, creditsystem.ConsultarAlternativaFinanciacionRequest{NumeroTarjeta: creditsystemtest.IdentificacionCardNotFound, Monto: d("10")})
		_, err5 := c.GrabarPagoTarjeta(ctx, pagoReq(creditsystemtest.IdentificacionCardNotFound, "1.00"))
		for i, err := range []error{err1, err2, err3, err4, err5} {
			if !errors.Is(err, creditsystem.ErrCardNotFound) {
				t.Errorf("call %d: err = %v, want nNumeroError 2", i+1, err)
			}
		}
	})
	t.Run("card 0000000002 with another identificacion", func(t *testing.T) {
		_, c := newFake(t, 2*time.Second)
		r := authReq(cliente, "10.00")
		r.NumeroTarjeta = creditsystemtest.IdentificacionCardNotFound
		if _, err := c.GrabarAutorizacion(t.Context(), r); !errors.Is(err, creditsystem.ErrCardNotFound) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("authorization of 666.66 is insufficient credit", func(t *testing.T) {
		srv, c := newFake(t, 2*time.Second)
		_, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, "666.66"))
		var be *creditsystem.Error
		if !errors.As(err, &be) || be.Code != 51 || be.Message != "Cupo insuficiente" {
			t.Fatalf("err = %v, want lError with nNumeroError 51", err)
		}
		if got := disponible(t, srv, cliente); got != "5000.00" {
			t.Errorf("a rejected authorization changed the line: %s", got)
		}
	})
	t.Run("authorization of 504.04 never answers", func(t *testing.T) {
		srv, c := newFake(t, 200*time.Millisecond)
		_, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, "504.04"))
		if !creditsystem.IsTimeout(err) {
			t.Fatalf("err = %v, want a timeout", err)
		}
		if _, opened := srv.Card(cliente); opened {
			t.Error("the timed-out authorization was recorded")
		}
	})
	t.Run("confirmation with OTP 000000 is an invalid OTP", func(t *testing.T) {
		srv, c := newFake(t, 2*time.Second)
		a, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, "100.00"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.GrabarConsumo(t.Context(), consumoReq(*a.NumeroAutorizacion, cliente, "F-1", "100.00", creditsystemtest.OTPInvalid))
		var be *creditsystem.Error
		if !errors.As(err, &be) || be.Code != creditsystemtest.CodeInvalidOTP || !strings.Contains(be.Message, "OTP") {
			t.Fatalf("err = %v, want invalid OTP", err)
		}
		if r, _ := srv.LastRequest("GrabarConsumo"); r.Fields["cCodigoOtp"] != "000000" {
			t.Errorf("cCodigoOtp = %q", r.Fields["cCodigoOtp"])
		}
		// The authorization is still usable with the right OTP.
		if _, err := c.GrabarConsumo(t.Context(), consumoReq(*a.NumeroAutorizacion, cliente, "F-1", "100.00", "482913")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("confirmation of invoice FAULT-500 is a fault in an HTTP 500", func(t *testing.T) {
		srv, c := newFake(t, 2*time.Second)
		a, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, "100.00"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.GrabarConsumo(t.Context(), consumoReq(*a.NumeroAutorizacion, cliente, creditsystemtest.NumeroFacturaFault, "100.00", ""))
		var fe *creditsystem.FaultError
		if !errors.As(err, &fe) || fe.HTTPStatus != 500 {
			t.Fatalf("err = %v, want a fault in HTTP 500", err)
		}
		if _, err := c.GrabarReversoAutorizacion(t.Context(), creditsystem.GrabarReversoAutorizacionRequest{NumeroAutorizacion: *a.NumeroAutorizacion, Identificacion: cliente}); err != nil {
			t.Errorf("the faulted confirmation consumed the authorization: %v", err)
		}
		_ = srv
	})
	t.Run("any other card has 5000.00 and gets an OTP", func(t *testing.T) {
		_, c := newFake(t, 2*time.Second)
		res, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: "1799999999"})
		if err != nil || res.Cupos[0].CupoDisponible.StringFixed(2) != "5000.00" || res.Cupos[0].CupoAsignado.StringFixed(2) != "5000.00" {
			t.Fatalf("ConsultarTarjeta = %+v, %v", res, err)
		}
		a, err := c.GrabarAutorizacion(t.Context(), authReq("1799999999", "10.00"))
		if err != nil || !a.CodigoSeguridadEnviado {
			t.Fatalf("GrabarAutorizacion = %+v, %v", a, err)
		}
	})
}

// Believable arithmetic: the line moves with authorizations, consumptions, payments and
// reversals, and every table adds up.
func TestArithmetic(t *testing.T) {
	srv, c := newFake(t, 2*time.Second)
	ctx := t.Context()
	a1, err := c.GrabarAutorizacion(ctx, authReq(cliente, "1200.00"))
	if err != nil {
		t.Fatal(err)
	}
	if got := disponible(t, srv, cliente); got != "3800.00" {
		t.Fatalf("after authorizing 1200.00: %s", got)
	}
	a2, err := c.GrabarAutorizacion(ctx, authReq(cliente, "300.00"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GrabarReversoAutorizacion(ctx, creditsystem.GrabarReversoAutorizacionRequest{NumeroAutorizacion: *a2.NumeroAutorizacion, Identificacion: cliente}); err != nil {
		t.Fatal(err)
	}
	if got := disponible(t, srv, cliente); got != "3800.00" {
		t.Fatalf("a reversal did not restore the line: %s", got)
	}
	if _, err := c.GrabarReversoAutorizacion(ctx, creditsystem.GrabarReversoAutorizacionRequest{NumeroAutorizacion: *a2.NumeroAutorizacion, Identificacion: cliente}); businessCode(err) != creditsystemtest.CodeInvalidState {
		t.Errorf("second reversal: %v", err)
	}
	if _, err := c.GrabarAutorizacion(ctx, authReq(cliente, "3800.01")); businessCode(err) != creditsystemtest.CodeInsufficientCredit {
		t.Errorf("authorizing above the line: %v", err)
	}

	// The invoice is 1000.00 of the 1200.00 authorized: 200.00 go back to the line.
	k, err := c.GrabarConsumo(ctx, consumoReq(*a1.NumeroAutorizacion, cliente, invoice, "1000.00", ""))
	if err != nil {
		t.Fatal(err)
	}
	if got := disponible(t, srv, cliente); got != "4000.00" {
		t.Fatalf("after consuming 1000.00: %s", got)
	}
	var capital, interes, cuotas decimal.Decimal
	for i, q := range k.TablaAmortizacion {
		if *q.NumeroCuota != i+1 || !q.ValorCuota.Equal(q.ValorCapital.Add(*q.ValorInteres)) {
			t.Errorf("cuota %d = %+v", i+1, q)
		}
		capital, interes, cuotas = capital.Add(*q.ValorCapital), interes.Add(*q.ValorInteres), cuotas.Add(*q.ValorCuota)
	}
	if capital.StringFixed(2) != "1000.00" || !cuotas.Equal(capital.Add(interes)) || len(k.TablaAmortizacion) != 6 {
		t.Errorf("table: capital %s interes %s cuotas %s", capital, interes, cuotas)
	}
	if k.TablaAmortizacion[0].FechaVencimiento.String() != "2025-04-10" || k.FechaMaxPago.String() != "2025-04-10" {
		t.Errorf("first due date %s, max %s", k.TablaAmortizacion[0].FechaVencimiento, k.FechaMaxPago)
	}
	if _, err := c.GrabarConsumo(ctx, consumoReq(*a1.NumeroAutorizacion, cliente, invoice, "1000.00", "")); businessCode(err) != creditsystemtest.CodeInvalidState {
		t.Errorf("second confirmation: %v", err)
	}

	deuda, err := c.ConsultarDeudaTarjeta(ctx, creditsystem.ConsultarDeudaTarjetaRequest{NumeroTarjeta: cliente})
	if err != nil {
		t.Fatal(err)
	}
	if deuda.PagoContado.StringFixed(2) != "1000.00" || !deuda.PagoMinimo.Equal(*k.TablaAmortizacion[0].ValorCuota) || deuda.FechaProximoPago.String() != "2025-04-10" {
		t.Errorf("deuda = contado %s minimo %s proximo %s", deuda.PagoContado, deuda.PagoMinimo, deuda.FechaProximoPago)
	}

	// A partial payment: interest first, then capital; the line gets the capital back.
	p, err := c.GrabarPagoTarjeta(ctx, creditsystem.GrabarPagoTarjetaRequest{NumeroTarjeta: cliente, ValorPago: d("300.00"), FechaPago: creditsystem.NewDate(2025, 3, 10),
		FormasPago: []creditsystem.FormaPago{{Codigo: "001", Valor: d("100.00")}, {Codigo: "002", Valor: d("200.00"), InstitucionFinanciera: "BANCO", NumeroDocumento: "1", NumeroCuenta: "2", IdentCuentaCorrentista: "3", NombreCuentaCorrentista: "4"}}})
	if err != nil {
		t.Fatal(err)
	}
	var sum, capPaid decimal.Decimal
	for _, r := range p.RubrosAplicados {
		sum = sum.Add(*r.Valor)
		if *r.Codigo == "CAP" {
			capPaid = *r.Valor
		}
	}
	if sum.StringFixed(2) != "300.00" || p.FacturasAfectadas[0].Valor.StringFixed(2) != "300.00" || *p.FacturasAfectadas[0].NumeroFactura != invoice {
		t.Errorf("rubros %v sum %s facturas %+v", p.RubrosAplicados, sum, p.FacturasAfectadas)
	}
	if got := disponible(t, srv, cliente); got != d("4000.00").Add(capPaid).StringFixed(2) || !p.Cupos[0].CupoDisponible.Equal(d(got)) {
		t.Errorf("after paying %s of capital: %s", capPaid, got)
	}
	after, _ := c.ConsultarDeudaTarjeta(ctx, creditsystem.ConsultarDeudaTarjetaRequest{NumeroTarjeta: cliente})
	if !after.PagoContado.Equal(deuda.PagoContado.Sub(capPaid)) {
		t.Errorf("debt after payment %s, want %s", after.PagoContado, deuda.PagoContado.Sub(capPaid))
	}

	// Reversing the payment restores the debt and the line.
	rv, err := c.GrabarReversoPagoTarjeta(ctx, creditsystem.GrabarReversoPagoTarjetaRequest{NumeroOperacion: *p.NumeroOperacion})
	if err != nil || len(rv.RubrosRevertidos) != len(p.RubrosAplicados) {
		t.Fatalf("reverso = %+v, %v", rv, err)
	}
	restored, _ := c.ConsultarDeudaTarjeta(ctx, creditsystem.ConsultarDeudaTarjetaRequest{NumeroTarjeta: cliente})
	if !restored.PagoContado.Equal(*deuda.PagoContado) || disponible(t, srv, cliente) != "4000.00" {
		t.Errorf("after the reversal: contado %s, line %s", restored.PagoContado, disponible(t, srv, cliente))
	}
	if _, err := c.GrabarReversoPagoTarjeta(ctx, creditsystem.GrabarReversoPagoTarjetaRequest{NumeroOperacion: *p.NumeroOperacion}); businessCode(err) != creditsystemtest.CodePaymentReversed {
		t.Errorf("second reversal: %v", err)
	}

	// Paying the whole cash amount gives the early-payment discount as a negative rubro.
	full, err := c.GrabarPagoTarjeta(ctx, creditsystem.GrabarPagoTarjetaRequest{NumeroTarjeta: cliente, ValorPago: *restored.PagoContado, FechaPago: creditsystem.NewDate(2025, 3, 10),
		FormasPago: []creditsystem.FormaPago{{Codigo: "001", Valor: *restored.PagoContado}}})
	if err != nil {
		t.Fatal(err)
	}
	sum = decimal.Zero
	var discount bool
	for _, r := range full.RubrosAplicados {
		sum = sum.Add(*r.Valor)
		discount = discount || r.Valor.IsNegative()
	}
	if !discount || !sum.Equal(*restored.PagoContado) {
		t.Errorf("full payment rubros %+v (sum %s)", full.RubrosAplicados, sum)
	}
	zero, _ := c.ConsultarDeudaTarjeta(ctx, creditsystem.ConsultarDeudaTarjetaRequest{NumeroTarjeta: cliente})
	if !zero.PagoContado.IsZero() || zero.FechaProximoPago != nil || disponible(t, srv, cliente) != "5000.00" {
		t.Errorf("after the full payment: contado %s, proximo %v, line %s", zero.PagoContado, zero.FechaProximoPago, disponible(t, srv, cliente))
	}
	if _, err := c.GrabarPagoTarjeta(ctx, creditsystem.GrabarPagoTarjetaRequest{NumeroTarjeta: cliente, ValorPago: d("1.00"), FechaPago: creditsystem.NewDate(2025, 3, 10),
		FormasPago: []creditsystem.FormaPago{{Codigo: "001", Valor: d("1.00")}}}); businessCode(err) != creditsystemtest.CodeNoDebt {
		t.Errorf("paying without debt: %v", err)
	}
}

func TestConsumptionReversalRestoresTheLine(t *testing.T) {
	srv, c := newFake(t, 2*time.Second)
	ctx := t.Context()
	a, err := c.GrabarAutorizacion(ctx, authReq(cliente, "800.00"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GrabarConsumo(ctx, consumoReq(*a.NumeroAutorizacion, cliente, invoice, "800.00", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GrabarReversoAutorizacion(ctx, creditsystem.GrabarReversoAutorizacionRequest{NumeroAutorizacion: *a.NumeroAutorizacion, Identificacion: cliente}); businessCode(err) != creditsystemtest.CodeInvalidState {
		t.Errorf("reversing a consumed authorization: %v", err)
	}
	if _, err := c.GrabarReversoConsumo(ctx, creditsystem.GrabarReversoConsumoRequest{NumeroReferencia: invoice, Identificacion: cliente}); err != nil {
		t.Fatal(err)
	}
	if got := disponible(t, srv, cliente); got != "5000.00" {
		t.Errorf("line after reversing the consumption: %s", got)
	}
	if _, err := c.GrabarReversoConsumo(ctx, creditsystem.GrabarReversoConsumoRequest{NumeroReferencia: invoice, Identificacion: cliente}); businessCode(err) != creditsystemtest.CodeInvalidState {
		t.Errorf("second reversal: %v", err)
	}
	if _, err := c.GrabarReversoConsumo(ctx, creditsystem.GrabarReversoConsumoRequest{NumeroReferencia: "OTRA", Identificacion: cliente}); businessCode(err) != creditsystemtest.CodeConsumoNotFound {
		t.Errorf("unknown invoice: %v", err)
	}
}

func TestOverdueDebt(t *testing.T) {
	now := fixedNow
	srv := creditsystemtest.NewServer(creditsystemtest.WithClock(func() time.Time { return now }))
	t.Cleanup(srv.Close)
	c, err := creditsystem.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	a, _ := c.GrabarAutorizacion(ctx, authReq(cliente, "600.00"))
	k, err := c.GrabarConsumo(ctx, consumoReq(*a.NumeroAutorizacion, cliente, invoice, "600.00", ""))
	if err != nil {
		t.Fatal(err)
	}
	now = time.Date(2025, 5, 20, 0, 0, 0, 0, time.UTC) // two installments overdue
	deuda, err := c.ConsultarDeudaTarjeta(ctx, creditsystem.ConsultarDeudaTarjetaRequest{NumeroTarjeta: cliente})
	if err != nil {
		t.Fatal(err)
	}
	vencido := k.TablaAmortizacion[0].ValorCuota.Add(*k.TablaAmortizacion[1].ValorCuota)
	if !deuda.ValorVencido.Equal(vencido) || !deuda.ValorMora.Equal(vencido.Mul(d("0.02")).Round(2)) || deuda.FechaProximoPago.String() != "2025-06-10" {
		t.Errorf("vencido %s mora %s proximo %s, want vencido %s", deuda.ValorVencido, deuda.ValorMora, deuda.FechaProximoPago, vencido)
	}
	wantMin := vencido.Add(*deuda.ValorMora).Add(*k.TablaAmortizacion[2].ValorCuota)
	if !deuda.PagoMinimo.Equal(wantMin) {
		t.Errorf("minimo %s, want %s", deuda.PagoMinimo, wantMin)
	}
}

func TestPaymentValidation(t *testing.T) {
	srv, c := newFake(t, 2*time.Second)
	ctx := t.Context()
	a, _ := c.GrabarAutorizacion(ctx, authReq(cliente, "100.00"))
	if _, err := c.GrabarConsumo(ctx, consumoReq(*a.NumeroAutorizacion, cliente, invoice, "100.00", "")); err != nil {
		t.Fatal(err)
	}
	pay := func(valor string, formas ...creditsystem.FormaPago) error {
		_, err := c.GrabarPagoTarjeta(ctx, creditsystem.GrabarPagoTarjetaRequest{NumeroTarjeta: cliente, ValorPago: d(valor), FechaPago: creditsystem.NewDate(2025, 3, 10), FormasPago: formas})
		return err
	}
	cases := []struct {
		name string
		err  error
		code int
	}{
		{"sum of methods differs", pay("50.00", creditsystem.FormaPago{Codigo: "001", Valor: d("40.00")}), creditsystemtest.CodePaymentSumMismatch},
		{"cheque without bank data", pay("50.00", creditsystem.FormaPago{Codigo: "002", Valor: d("50.00")}), creditsystemtest.CodeInvalidFormaPago},
		{"cash with bank data", pay("50.00", creditsystem.FormaPago{Codigo: "001", Valor: d("50.00"), NumeroCuenta: "1"}), creditsystemtest.CodeInvalidFormaPago},
		{"unknown method", pay("50.00", creditsystem.FormaPago{Codigo: "009", Valor: d("50.00")}), creditsystemtest.CodeInvalidFormaPago},
		{"above the cash amount", pay("100.01", creditsystem.FormaPago{Codigo: "001", Valor: d("100.01")}), creditsystemtest.CodePaymentAboveContado},
		{"negative", pay("-5.00", creditsystem.FormaPago{Codigo: "001", Valor: d("-5.00")}), creditsystemtest.CodeInvalidAmount},
	}
	for _, tc := range cases {
		if got := businessCode(tc.err); got != tc.code {
			t.Errorf("%s: %v, want code %d", tc.name, tc.err, tc.code)
		}
	}
	if got := disponible(t, srv, cliente); got != "4900.00" {
		t.Errorf("rejected payments moved the line: %s", got)
	}
	// A zero payment never reaches the fake: the client refuses it as a missing ValorPago.
	before := srv.Calls("GrabarPagoTarjeta")
	if err := pay("0.00", creditsystem.FormaPago{Codigo: "001", Valor: d("0.00")}); !errors.Is(err, creditsystem.ErrInvalidRequest) || srv.Calls("GrabarPagoTarjeta") != before {
		t.Errorf("zero payment: err = %v, calls %d -> %d", err, before, srv.Calls("GrabarPagoTarjeta"))
	}
}

func TestScripting(t *testing.T) {
	t.Run("reactions are consumed in order, one per call", func(t *testing.T) {
		srv, c := newFake(t, 2*time.Second)
		srv.Script("ConsultarTarjeta", creditsystemtest.BusinessError(7, "uno"), creditsystemtest.BusinessError(8, "dos"))
		var codes []int
		for range 3 {
			_, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: cliente})
			codes = append(codes, businessCode(err))
		}
		if codes[0] != 7 || codes[1] != 8 || codes[2] != -1 {
			t.Errorf("codes = %v, want [7 8 -1]", codes)
		}
		if srv.Calls("ConsultarTarjeta") != 3 || srv.Calls("GrabarConsumo") != 0 {
			t.Errorf("calls = %d, %d", srv.Calls("ConsultarTarjeta"), srv.Calls("GrabarConsumo"))
		}
	})
	t.Run("a scripted outcome beats the magic values", func(t *testing.T) {
		srv, c := newFake(t, 2*time.Second)
		srv.Script("GrabarAutorizacion", creditsystemtest.Fault("s:Client", "x").WithStatus(200))
		_, err := c.GrabarAutorizacion(t.Context(), authReq(creditsystemtest.IdentificacionCardNotFound, "666.66"))
		var fe *creditsystem.FaultError
		if !errors.As(err, &fe) || fe.HTTPStatus != 200 {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("slow within the deadline answers", func(t *testing.T) {
		srv, c := newFake(t, 2*time.Second)
		srv.Script("GrabarAutorizacion", creditsystemtest.Process().After(50*time.Millisecond))
		if _, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, "10.00")); err != nil {
			t.Fatal(err)
		}
		if disponible(t, srv, cliente) != "4990.00" {
			t.Error("the delayed authorization was not recorded")
		}
	})
	// A creditsystem slower than the deadline that still commits: the call times out and
	// the authorization shows in the fake afterwards.
	t.Run("slow past the deadline is a timeout, then a late success", func(t *testing.T) {
		srv, c := newFake(t, 100*time.Millisecond)
		srv.Script("GrabarAutorizacion", creditsystemtest.Process().After(400*time.Millisecond))
		if _, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, "10.00")); !creditsystem.IsTimeout(err) {
			t.Fatalf("err = %v", err)
		}
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, opened := srv.Card(cliente); opened {
				break
			}
		}
		if got := disponible(t, srv, cliente); got != "4990.00" {
			t.Errorf("available %s after the late success, want 4990.00", got)
		}
	})
	t.Run("closing the fake ends a slow call unprocessed", func(t *testing.T) {
		srv, c := newFake(t, 2*time.Second)
		srv.Script("GrabarAutorizacion", creditsystemtest.Process().After(time.Minute))
		go func() {
			for srv.Calls("GrabarAutorizacion") == 0 {
				time.Sleep(5 * time.Millisecond)
			}
			srv.Fake.Close()
		}()
		if _, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, "10.00")); !creditsystem.IsTransport(err) || creditsystem.IsTimeout(err) {
			t.Fatalf("err = %v, want a dropped connection", err)
		}
		if _, opened := srv.Card(cliente); opened {
			t.Error("the request was processed after Close")
		}
	})
	t.Run("late success records and never answers", func(t *testing.T) {
		srv, c := newFake(t, 150*time.Millisecond)
		srv.Script("GrabarAutorizacion", creditsystemtest.LateSuccess())
		if _, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, "10.00")); !creditsystem.IsTimeout(err) {
			t.Fatalf("err = %v", err)
		}
		if disponible(t, srv, cliente) != "4990.00" {
			t.Error("late success did not record the authorization")
		}
	})
	t.Run("dropped connection records nothing", func(t *testing.T) {
		srv, c := newFake(t, 2*time.Second)
		srv.Script("GrabarAutorizacion", creditsystemtest.Drop())
		_, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, "10.00"))
		if !creditsystem.IsTransport(err) || creditsystem.IsTimeout(err) {
			t.Fatalf("err = %v", err)
		}
		if _, opened := srv.Card(cliente); opened {
			t.Error("a dropped request was processed")
		}
	})
	t.Run("last request fields", func(t *testing.T) {
		srv, c := newFake(t, 2*time.Second)
		r := authReq(cliente, "10.00")
		r.Articulos = []creditsystem.Articulo{{TextoArticulo: "TV", Cantidad: 2, Precio: d("5.00")}, {TextoArticulo: "CABLE", Cantidad: 1, Precio: d("0.01")}}
		if _, err := c.GrabarAutorizacion(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		req, ok := srv.LastRequest("GrabarAutorizacion")
		if !ok || req.Fields["nMonto"] != "10.00" || req.Fields["cCodigoOtp"] != creditsystemtest.DevOTPBypass || len(req.Lists["iArticuloVm"]) != 2 ||
			req.Lists["iArticuloVm"][1]["nPrecio"] != "0.01" || req.Lists["iArticuloVm"][0]["cTextoArticulo"] != "TV" {
			t.Errorf("last request = %+v", req)
		}
		if _, ok := srv.LastRequest("GrabarConsumo"); ok {
			t.Error("a request that never came")
		}
	})
	t.Run("unknown operation panics", func(t *testing.T) {
		srv, _ := newFake(t, time.Second)
		defer func() {
			if recover() == nil {
				t.Error("no panic")
			}
		}()
		srv.Script("Nope", creditsystemtest.Hang())
	})
}

func TestRouting(t *testing.T) {
	srv, _ := newFake(t, time.Second)
	post := func(url, action, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("SOAPAction", `"`+action+`"`)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(res.Body)
		// Faults and error answers alike are valid against the WSDL's schema.
		if err := checkedSchema(t).ValidateEnvelope(b.Bytes()); err != nil {
			t.Error(err)
		}
		return res, b.String()
	}
	env := `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>%s</s:Body></s:Envelope>`
	cases := []struct {
		name, url, action, body string
		status                  int
		contains                string
	}{
		{"central operation on the Cartera path", srv.CarteraURL, "http://tempuri.org/IServicioCentral/ConsultarAlternativaFinanciacion", env, 500, "ActionNotSupported"},
		{"cartera operation on the Central path", srv.CentralURL, "http://tempuri.org/IServicioCar/ConsultarTarjeta", env, 500, "ActionNotSupported"},
		{"unknown action", srv.URL, "http://tempuri.org/IServicioCar/Nope", env, 500, "ActionNotSupported"},
		{"wrong namespace", srv.URL, "http://other/IServicioCar/ConsultarTarjeta", env, 500, "ActionNotSupported"},
		{"malformed body", srv.CarteraURL, "http://tempuri.org/IServicioCar/ConsultarTarjeta", "<not xml", 500, "DeserializationFailed"},
		{"operation element in no namespace", srv.CarteraURL, "http://tempuri.org/IServicioCar/ConsultarTarjeta", strings.Replace(env, "%s", "<ConsultarTarjeta/>", 1), 500, "DeserializationFailed"},
		{"empty request", srv.URL, "http://tempuri.org/IServicioCar/ConsultarTarjeta", strings.Replace(env, "%s", `<ConsultarTarjeta xmlns="http://tempuri.org/"/>`, 1), 200, "<a:nNumeroError>1</a:nNumeroError>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, body := post(tc.url, tc.action, tc.body)
			if res.StatusCode != tc.status || !strings.Contains(body, tc.contains) {
				t.Errorf("HTTP %d %s", res.StatusCode, body)
			}
		})
	}
	res, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET = %d", res.StatusCode)
	}
}

// Development mode: a service can serve the Fake on a real loopback listener.
func TestFakeOnLoopbackListener(t *testing.T) {
	h := creditsystemtest.NewFake()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { h.Close(); hs.Close() })

	cfg := creditsystemtest.DevConfig()
	cfg.CarteraURL = "http://" + ln.Addr().String() + creditsystemtest.CarteraPath
	cfg.CentralURL = "http://" + ln.Addr().String() + creditsystemtest.CentralPath
	cfg.Timeout = 5 * time.Second
	c, err := creditsystem.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: cliente}); err != nil {
		t.Fatal(err)
	}
	// Close releases a request held by the 504.04 magic value.
	done := make(chan error, 1)
	go func() {
		_, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, "504.04"))
		done <- err
	}()
	for h.Calls("GrabarAutorizacion") == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	h.Close()
	select {
	case err := <-done:
		if !creditsystem.IsTransport(err) {
			t.Errorf("err = %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Close did not release the held request")
	}
}

func TestWithFirstAuthorization(t *testing.T) {
	srv := creditsystemtest.NewServer(creditsystemtest.WithFirstAuthorization(1764000000))
	defer srv.Close()
	c, err := creditsystem.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 2 {
		a, err := c.GrabarAutorizacion(t.Context(), creditsystem.GrabarAutorizacionRequest{
			Identificacion: "0912345678", NumeroTarjeta: "0912345678", CodigoProducto: "001",
			Plazo: 3, Monto: decimal.RequireFromString("10.00"), PuntoVenta: "PV",
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, *a.NumeroAutorizacion)
	}
	if ids[0] != "AUT1764000000" || ids[1] != "AUT1764000001" {
		t.Fatalf("authorization ids %v, want AUT1764000000 then AUT1764000001", ids)
	}
}

// A development fake numbers its authorizations from the start time so that a restarted service
// never repeats an id its database holds; it must also let the flows its previous run started
// go on, since the service resends everything the authorization needs.
func TestWithFirstAuthorizationAdoptsEarlierRuns(t *testing.T) {
	const first = 1764000000
	const ident = "0912345678"
	earlier := func(n int) string { return fmt.Sprintf("AUT%d", n) }
	tests := []struct {
		name     string
		call     func(t *testing.T, c *creditsystem.Client) error
		wantCode int // 0: accepted
		wantDisp string
	}{
		{"confirmation of an earlier run's authorization", func(t *testing.T, c *creditsystem.Client) error {
			req := consumoReq(earlier(first-5), ident, "F-1", "300.00", "")
			req.Monto = d("400.00")
			_, err := c.GrabarConsumo(t.Context(), req)
			return err
		}, 0, "4700.00"},
		{"reversal of an earlier run's authorization", func(t *testing.T, c *creditsystem.Client) error {
			_, err := c.GrabarReversoAutorizacion(t.Context(), creditsystem.GrabarReversoAutorizacionRequest{NumeroAutorizacion: earlier(first - 1), Identificacion: ident})
			return err
		}, 0, "5000.00"},
		{"reversal of an earlier run's consumption", func(t *testing.T, c *creditsystem.Client) error {
			_, err := c.GrabarReversoConsumo(t.Context(), creditsystem.GrabarReversoConsumoRequest{NumeroReferencia: "F-EARLIER", Identificacion: ident})
			return err
		}, 0, "5000.00"},
		{"an id this run could still issue is unknown", func(t *testing.T, c *creditsystem.Client) error {
			_, err := c.GrabarConsumo(t.Context(), consumoReq(earlier(first+7), ident, "F-2", "10.00", ""))
			return err
		}, creditsystemtest.CodeAuthNotFound, "5000.00"},
		{"an id of another shape is unknown", func(t *testing.T, c *creditsystem.Client) error {
			_, err := c.GrabarReversoAutorizacion(t.Context(), creditsystem.GrabarReversoAutorizacionRequest{NumeroAutorizacion: "X123", Identificacion: ident})
			return err
		}, creditsystemtest.CodeAuthNotFound, "5000.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, c := newFake(t, 2*time.Second, creditsystemtest.WithFirstAuthorization(first))
			err := tt.call(t, c)
			if tt.wantCode == 0 && err != nil {
				t.Fatalf("err = %v, want accepted", err)
			}
			if tt.wantCode != 0 && businessCode(err) != tt.wantCode {
				t.Fatalf("err = %v, want nNumeroError %d", err, tt.wantCode)
			}
			if got := disponible(t, srv, ident); got != tt.wantDisp {
				t.Errorf("disponible = %s, want %s", got, tt.wantDisp)
			}
		})
	}

	t.Run("without WithFirstAuthorization nothing is adopted", func(t *testing.T) {
		_, c := newFake(t, 2*time.Second)
		_, err := c.GrabarConsumo(t.Context(), consumoReq("AUT0000001", ident, "F-3", "10.00", ""))
		if businessCode(err) != creditsystemtest.CodeAuthNotFound {
			t.Fatalf("err = %v, want nNumeroError %d", err, creditsystemtest.CodeAuthNotFound)
		}
	})
}

// ConsultarTarjeta carries the card in cNumeroTarjeta and the identification in
// cNumeroIdentificacion; the magic customer without card wins in either field.
func TestConsultarTarjetaMagicInEitherField(t *testing.T) {
	magic := creditsystemtest.IdentificacionCardNotFound
	cases := []struct {
		name         string
		req          creditsystem.ConsultarTarjetaRequest
		wantNotFound bool
	}{
		{"magic identificacion, no card", creditsystem.ConsultarTarjetaRequest{Identificacion: magic}, true},
		{"magic identificacion with a card number", creditsystem.ConsultarTarjetaRequest{Identificacion: magic, NumeroTarjeta: "0911111111"}, true},
		{"magic card with another identificacion", creditsystem.ConsultarTarjetaRequest{Identificacion: cliente, NumeroTarjeta: magic}, true},
		{"magic card, no identificacion", creditsystem.ConsultarTarjetaRequest{NumeroTarjeta: magic}, true},
		{"neither is magic", creditsystem.ConsultarTarjetaRequest{Identificacion: cliente, NumeroTarjeta: "0911111111"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newFake(t, 2*time.Second)
			res, err := c.ConsultarTarjeta(t.Context(), tc.req)
			if tc.wantNotFound {
				if !errors.Is(err, creditsystem.ErrCardNotFound) || businessCode(err) != 2 {
					t.Fatalf("err = %v, want nNumeroError 2", err)
				}
			} else if err != nil || res.NumeroTarjeta == nil || *res.NumeroTarjeta != tc.req.NumeroTarjeta {
				t.Fatalf("res = %+v, err = %v", res, err)
			}
			r, _ := srv.LastRequest("ConsultarTarjeta")
			if tc.req.Identificacion != "" && r.Fields["cNumeroIdentificacion"] != tc.req.Identificacion {
				t.Errorf("cNumeroIdentificacion = %q, want %q", r.Fields["cNumeroIdentificacion"], tc.req.Identificacion)
			}
		})
	}
}

// TestPaymentMagicValues: the payment amounts and the reversal reason that script an outcome.
func TestPaymentMagicValues(t *testing.T) {
	// withDebt opens the card with a consumption of 1000.00, so that every magic amount fits
	// under its pago contado, and returns the debt's pago contado.
	withDebt := func(t *testing.T, c *creditsystem.Client) decimal.Decimal {
		t.Helper()
		a, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, "1000.00"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.GrabarConsumo(t.Context(), consumoReq(*a.NumeroAutorizacion, cliente, "F-1", "1000.00", "482913")); err != nil {
			t.Fatal(err)
		}
		deuda, err := c.ConsultarDeudaTarjeta(t.Context(), creditsystem.ConsultarDeudaTarjetaRequest{NumeroTarjeta: cliente})
		if err != nil {
			t.Fatal(err)
		}
		return *deuda.PagoContado
	}
	contado := func(t *testing.T, c *creditsystem.Client) decimal.Decimal {
		t.Helper()
		deuda, err := c.ConsultarDeudaTarjeta(t.Context(), creditsystem.ConsultarDeudaTarjetaRequest{NumeroTarjeta: cliente})
		if err != nil {
			t.Fatal(err)
		}
		return *deuda.PagoContado
	}
	t.Run("payment of 666.66 is rejected", func(t *testing.T) {
		_, c := newFake(t, 2*time.Second)
		before := withDebt(t, c)
		_, err := c.GrabarPagoTarjeta(t.Context(), pagoReq(cliente, "666.66"))
		var be *creditsystem.Error
		if !errors.As(err, &be) || be.Code != creditsystemtest.CodePaymentRejected {
			t.Fatalf("err = %v, want lError with nNumeroError 74", err)
		}
		if got := contado(t, c); !got.Equal(before) {
			t.Errorf("a rejected payment moved the debt: %s -> %s", before, got)
		}
	})
	t.Run("payment of 504.04 never answers and applies nothing", func(t *testing.T) {
		_, c := newFake(t, 200*time.Millisecond)
		before := withDebt(t, c)
		if _, err := c.GrabarPagoTarjeta(t.Context(), pagoReq(cliente, "504.04")); !creditsystem.IsTimeout(err) {
			t.Fatalf("err = %v, want a timeout", err)
		}
		if got := contado(t, c); !got.Equal(before) {
			t.Errorf("the timed-out payment moved the debt: %s -> %s", before, got)
		}
	})
	t.Run("payment of 504.05 is applied and never answered", func(t *testing.T) {
		_, c := newFake(t, 200*time.Millisecond)
		before := withDebt(t, c)
		if _, err := c.GrabarPagoTarjeta(t.Context(), pagoReq(cliente, "504.05")); !creditsystem.IsTimeout(err) {
			t.Fatalf("err = %v, want a timeout", err)
		}
		if got := contado(t, c); !got.LessThan(before) {
			t.Errorf("the late payment was not applied: %s -> %s", before, got)
		}
	})
	t.Run("reversal with reason FAULT-500 is a fault", func(t *testing.T) {
		_, c := newFake(t, 2*time.Second)
		withDebt(t, c)
		p, err := c.GrabarPagoTarjeta(t.Context(), pagoReq(cliente, "100.00"))
		if err != nil {
			t.Fatal(err)
		}
		after := contado(t, c)
		_, err = c.GrabarReversoPagoTarjeta(t.Context(), creditsystem.GrabarReversoPagoTarjetaRequest{NumeroOperacion: *p.NumeroOperacion, MotivoReverso: creditsystemtest.MotivoReversoFault})
		var fe *creditsystem.FaultError
		if !errors.As(err, &fe) || fe.HTTPStatus != 500 {
			t.Fatalf("err = %v, want a fault in HTTP 500", err)
		}
		if got := contado(t, c); !got.Equal(after) {
			t.Errorf("the faulted reversal moved the debt: %s -> %s", after, got)
		}
	})
}
