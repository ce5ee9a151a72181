package creditsystemtest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
)

// cupoDisponible is the first line's available credit of a ConsultarTarjeta answer.
func cupoDisponible(t *testing.T, c *creditsystem.Client, ident string) string {
	t.Helper()
	res, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cupos) == 0 || res.Cupos[0].CupoDisponible == nil || res.Cupos[0].CupoAsignado == nil || res.Cupos[0].CupoUtilizado == nil {
		t.Fatalf("ConsultarTarjeta without a complete line: %+v", res.Cupos)
	}
	cu := res.Cupos[0]
	if !cu.CupoAsignado.Sub(*cu.CupoUtilizado).Equal(*cu.CupoDisponible) {
		t.Errorf("line does not add up: asignado %s utilizado %s disponible %s", cu.CupoAsignado, cu.CupoUtilizado, cu.CupoDisponible)
	}
	return cu.CupoDisponible.StringFixed(2)
}

// The default fake consumes the line; that is what WithFixedCreditLines turns off.
func TestDefaultCreditLinesDeplete(t *testing.T) {
	_, c := newFake(t, 2*time.Second)
	if _, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, "3000.00")); err != nil {
		t.Fatal(err)
	}
	if got := cupoDisponible(t, c, cliente); got != "2000.00" {
		t.Errorf("disponible after authorizing 3000.00 = %s, want 2000.00", got)
	}
	if _, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, "3000.00")); businessCode(err) != creditsystemtest.CodeInsufficientCredit {
		t.Errorf("second 3000.00: err = %v, want nNumeroError 51", err)
	}
}

func TestWithFixedCreditLines(t *testing.T) {
	t.Run("repeated authorizations never consume the line", func(t *testing.T) {
		srv, c := newFake(t, 2*time.Second, creditsystemtest.WithFixedCreditLines())
		for i := range 3 {
			a, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, "3000.00"))
			if err != nil || !a.CodigoSeguridadEnviado {
				t.Fatalf("authorization %d of 3000.00 = %+v, %v", i+1, a, err)
			}
			if got := cupoDisponible(t, c, cliente); got != "5000.00" {
				t.Fatalf("disponible after authorization %d = %s, want 5000.00", i+1, got)
			}
		}
		if card, _ := srv.Card(cliente); !card.Utilizado.IsZero() || card.Disponible.StringFixed(2) != "5000.00" {
			t.Errorf("Card = %+v, want nothing used", card)
		}
	})
	t.Run("each authorization is checked against the full line", func(t *testing.T) {
		_, c := newFake(t, 2*time.Second, creditsystemtest.WithFixedCreditLines())
		cases := []struct {
			name     string
			monto    string
			wantCode int // 0: authorized
		}{
			{"the whole line", "5000.00", 0},
			{"the whole line again", "5000.00", 0},
			{"one cent above the line", "5000.01", creditsystemtest.CodeInsufficientCredit},
			{"magic insufficient credit", creditsystemtest.MontoInsufficientCredit.StringFixed(2), creditsystemtest.CodeInsufficientCredit},
			{"a small amount after all that", "10.00", 0},
		}
		for _, tc := range cases {
			_, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, tc.monto))
			if tc.wantCode == 0 && err != nil {
				t.Errorf("%s: err = %v, want authorized", tc.name, err)
			}
			if tc.wantCode != 0 && businessCode(err) != tc.wantCode {
				t.Errorf("%s: err = %v, want nNumeroError %d", tc.name, err, tc.wantCode)
			}
		}
	})
	t.Run("a consumption reports the line minus its own amount", func(t *testing.T) {
		_, c := newFake(t, 2*time.Second, creditsystemtest.WithFixedCreditLines())
		for i, factura := range []string{"F-1", "F-2"} {
			a, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, "3000.00"))
			if err != nil {
				t.Fatal(err)
			}
			k, err := c.GrabarConsumo(t.Context(), consumoReq(*a.NumeroAutorizacion, cliente, factura, "2500.00", ""))
			if err != nil {
				t.Fatalf("consumption %d: %v", i+1, err)
			}
			cu := k.CuposAfectados[0]
			if cu.CupoDisponible.StringFixed(2) != "2500.00" || cu.CupoUtilizado.StringFixed(2) != "2500.00" || cu.CupoAsignado.StringFixed(2) != "5000.00" {
				t.Errorf("consumption %d cupos_afectados: disponible %s utilizado %s asignado %s, want 2500.00, 2500.00, 5000.00",
					i+1, cu.CupoDisponible, cu.CupoUtilizado, cu.CupoAsignado)
			}
			if got := cupoDisponible(t, c, cliente); got != "5000.00" {
				t.Errorf("disponible after consumption %d = %s, want 5000.00", i+1, got)
			}
		}
		// The debt still counts both consumptions; a payment reports the whole line.
		deuda, err := c.ConsultarDeudaTarjeta(t.Context(), creditsystem.ConsultarDeudaTarjetaRequest{NumeroTarjeta: cliente})
		if err != nil || deuda.PagoContado.StringFixed(2) != "5000.00" {
			t.Fatalf("deuda = %+v, %v; want pago contado 5000.00", deuda, err)
		}
		p, err := c.GrabarPagoTarjeta(t.Context(), pagoReq(cliente, "100.00"))
		if err != nil || p.Cupos[0].CupoDisponible.StringFixed(2) != "5000.00" {
			t.Fatalf("payment = %+v, %v; want the whole line available", p, err)
		}
		if got := cupoDisponible(t, c, cliente); got != "5000.00" {
			t.Errorf("disponible after the payment = %s, want 5000.00", got)
		}
	})
	t.Run("the magic values still work", func(t *testing.T) {
		_, c := newFake(t, 300*time.Millisecond, creditsystemtest.WithFixedCreditLines())
		ctx := t.Context()
		if _, err := c.ConsultarTarjeta(ctx, creditsystem.ConsultarTarjetaRequest{Identificacion: creditsystemtest.IdentificacionCardNotFound}); !errors.Is(err, creditsystem.ErrCardNotFound) {
			t.Errorf("card 0000000002: err = %v, want nNumeroError 2", err)
		}
		if _, err := c.GrabarAutorizacion(ctx, authReq(cliente, "504.04")); !creditsystem.IsTimeout(err) {
			t.Errorf("504.04: err = %v, want a timeout", err)
		}
		a, err := c.GrabarAutorizacion(ctx, authReq(cliente, "100.00"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.GrabarConsumo(ctx, consumoReq(*a.NumeroAutorizacion, cliente, "F-1", "100.00", creditsystemtest.OTPInvalid)); businessCode(err) != creditsystemtest.CodeInvalidOTP {
			t.Errorf("OTP 000000: err = %v, want nNumeroError %d", err, creditsystemtest.CodeInvalidOTP)
		}
		var fe *creditsystem.FaultError
		if _, err := c.GrabarConsumo(ctx, consumoReq(*a.NumeroAutorizacion, cliente, creditsystemtest.NumeroFacturaFault, "100.00", "")); !errors.As(err, &fe) || fe.HTTPStatus != 500 {
			t.Errorf("FAULT-500: err = %v, want a fault in HTTP 500", err)
		}
	})
}

// The fake builds one amortization row per installment: a term above MaxPlazo is a business
// error, answered at once, not a table of millions of rows.
func TestPlazoCap(t *testing.T) {
	const first = 1764000000
	cases := []struct {
		name     string
		plazo    int
		wantCode int // 0: authorized and confirmed with a table of plazo rows
	}{
		{"plazo 360 (MaxPlazo) is accepted", creditsystemtest.MaxPlazo, 0},
		{"plazo 361 is invalid", creditsystemtest.MaxPlazo + 1, creditsystemtest.CodeInvalidAmount},
		{"plazo 200000 is invalid", 200000, creditsystemtest.CodeInvalidAmount},
		{"plazo 2147483647 is invalid", 2147483647, creditsystemtest.CodeInvalidAmount},
		{"plazo 0 is invalid", 0, creditsystemtest.CodeInvalidAmount},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newFake(t, 5*time.Second, creditsystemtest.WithFirstAuthorization(first))
			start := time.Now()
			req := authReq(cliente, "1000.00")
			req.Plazo = tc.plazo
			a, err := c.GrabarAutorizacion(t.Context(), req)
			if tc.wantCode != 0 {
				var be *creditsystem.Error
				if !errors.As(err, &be) || be.Code != tc.wantCode {
					t.Fatalf("GrabarAutorizacion: err = %v, want nNumeroError %d", err, tc.wantCode)
				}
				if got := disponible(t, srv, cliente); got != "5000.00" {
					t.Errorf("a refused authorization took credit: disponible %s", got)
				}
				// An earlier run's authorization adopted with that term is refused the same way.
				k := consumoReq("AUT1", cliente, "F-ADOPT", "100.00", "")
				k.Plazo = tc.plazo
				if tc.plazo > creditsystemtest.MaxPlazo {
					if _, err := c.GrabarConsumo(t.Context(), k); businessCode(err) != tc.wantCode {
						t.Fatalf("GrabarConsumo adopting plazo %d: err = %v, want nNumeroError %d", tc.plazo, err, tc.wantCode)
					}
				}
			} else {
				if err != nil {
					t.Fatalf("GrabarAutorizacion: %v", err)
				}
				k := consumoReq(*a.NumeroAutorizacion, cliente, "F-1", "1000.00", "")
				k.Plazo = tc.plazo
				res, err := c.GrabarConsumo(t.Context(), k)
				if err != nil {
					t.Fatalf("GrabarConsumo: %v", err)
				}
				capital := decimal.Zero
				for _, q := range res.TablaAmortizacion {
					capital = capital.Add(*q.ValorCapital)
				}
				if len(res.TablaAmortizacion) != tc.plazo || capital.StringFixed(2) != "1000.00" {
					t.Errorf("table of %d rows adding up to %s, want %d rows adding up to 1000.00", len(res.TablaAmortizacion), capital, tc.plazo)
				}
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
	t.Run("financing alternatives have bounded terms", func(t *testing.T) {
		_, c := newFake(t, 2*time.Second)
		res, err := c.ConsultarAlternativaFinanciacion(t.Context(), creditsystem.ConsultarAlternativaFinanciacionRequest{NumeroTarjeta: cliente, Monto: d("1000.00")})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range res.Alternativas {
			if a.Plazo == nil || *a.Plazo < 1 || *a.Plazo > creditsystemtest.MaxPlazo {
				t.Errorf("alternative with plazo %v", a.Plazo)
			}
		}
	})
}
