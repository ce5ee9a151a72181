package creditsystem_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
)

func validConsumo() creditsystem.GrabarConsumoRequest {
	return creditsystem.GrabarConsumoRequest{
		NumeroAutorizacion: "AUT0000001", NumeroFactura: factura, MontoFacturado: dec("10.00"),
		FechaFactura: creditsystem.NewDate(2025, 3, 10), CodigoProducto: "001",
		Identificacion: ident1, NumeroTarjeta: card1, Plazo: 6, Monto: dec("10.00"),
	}
}

func validPago() creditsystem.GrabarPagoTarjetaRequest {
	return creditsystem.GrabarPagoTarjetaRequest{
		NumeroTarjeta: card1, ValorPago: dec("10.00"), FechaPago: creditsystem.NewDate(2025, 3, 10),
		FormasPago: []creditsystem.FormaPago{{Codigo: creditsystem.FormaPagoEfectivo, Valor: dec("10.00")}},
	}
}

// Requests that miss a field the specification makes required fail with ErrInvalidRequest
// before anything goes on the wire; complete ones are sent.
func TestInvalidRequestBeforeAnyCall(t *testing.T) {
	consumo := func(mutate func(*creditsystem.GrabarConsumoRequest)) func(context.Context, *creditsystem.Client) error {
		return func(ctx context.Context, c *creditsystem.Client) error {
			r := validConsumo()
			mutate(&r)
			_, err := c.GrabarConsumo(ctx, r)
			return err
		}
	}
	pago := func(mutate func(*creditsystem.GrabarPagoTarjetaRequest)) func(context.Context, *creditsystem.Client) error {
		return func(ctx context.Context, c *creditsystem.Client) error {
			r := validPago()
			mutate(&r)
			_, err := c.GrabarPagoTarjeta(ctx, r)
			return err
		}
	}
	reverso := func(n int64) func(context.Context, *creditsystem.Client) error {
		return func(ctx context.Context, c *creditsystem.Client) error {
			_, err := c.GrabarReversoPagoTarjeta(ctx, creditsystem.GrabarReversoPagoTarjetaRequest{NumeroOperacion: n, MotivoReverso: "X"})
			return err
		}
	}
	cases := []struct {
		name        string
		call        func(context.Context, *creditsystem.Client) error
		wantMissing string // "" for a complete request, which must be sent
	}{
		{"GrabarConsumo complete", consumo(func(*creditsystem.GrabarConsumoRequest) {}), ""},
		{"GrabarConsumo card only", consumo(func(r *creditsystem.GrabarConsumoRequest) { r.Identificacion = "" }), ""},
		{"GrabarConsumo identificacion only", consumo(func(r *creditsystem.GrabarConsumoRequest) { r.NumeroTarjeta = "" }), ""},
		{"GrabarConsumo without NumeroAutorizacion", consumo(func(r *creditsystem.GrabarConsumoRequest) { r.NumeroAutorizacion = "" }), "NumeroAutorizacion"},
		{"GrabarConsumo without NumeroFactura", consumo(func(r *creditsystem.GrabarConsumoRequest) { r.NumeroFactura = "" }), "NumeroFactura"},
		{"GrabarConsumo without MontoFacturado", consumo(func(r *creditsystem.GrabarConsumoRequest) { r.MontoFacturado = dec("0") }), "MontoFacturado"},
		{"GrabarConsumo without FechaFactura", consumo(func(r *creditsystem.GrabarConsumoRequest) { r.FechaFactura = creditsystem.Date{} }), "FechaFactura"},
		{"GrabarConsumo without card and identificacion", consumo(func(r *creditsystem.GrabarConsumoRequest) { r.NumeroTarjeta, r.Identificacion = "", "" }), "NumeroTarjeta or Identificacion"},
		{"GrabarPagoTarjeta complete", pago(func(*creditsystem.GrabarPagoTarjetaRequest) {}), ""},
		{"GrabarPagoTarjeta without NumeroTarjeta", pago(func(r *creditsystem.GrabarPagoTarjetaRequest) { r.NumeroTarjeta = "" }), "NumeroTarjeta"},
		{"GrabarPagoTarjeta without ValorPago", pago(func(r *creditsystem.GrabarPagoTarjetaRequest) { r.ValorPago = dec("0.00") }), "ValorPago"},
		{"GrabarPagoTarjeta without FechaPago", pago(func(r *creditsystem.GrabarPagoTarjetaRequest) { r.FechaPago = creditsystem.Date{} }), "FechaPago"},
		{"GrabarPagoTarjeta without FormasPago", pago(func(r *creditsystem.GrabarPagoTarjetaRequest) { r.FormasPago = nil }), "FormasPago"},
		{"GrabarPagoTarjeta with a FormaPago without Codigo", pago(func(r *creditsystem.GrabarPagoTarjetaRequest) { r.FormasPago[0].Codigo = "" }), "FormasPago[0].Codigo"},
		{"GrabarReversoPagoTarjeta complete", reverso(7), ""},
		{"GrabarReversoPagoTarjeta without NumeroOperacion", reverso(0), "NumeroOperacion"},
		{"GrabarReversoPagoTarjeta with a negative NumeroOperacion", reverso(-1), "NumeroOperacion"},
		{"ConsultarDeudaTarjeta without card and identificacion", func(ctx context.Context, c *creditsystem.Client) error {
			_, err := c.ConsultarDeudaTarjeta(ctx, creditsystem.ConsultarDeudaTarjetaRequest{})
			return err
		}, "NumeroTarjeta or NumeroIdentificacion"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var sent atomic.Int64
			hc := &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
				sent.Add(1)
				return nil, errors.New("no network in this test")
			})}
			cfg := creditsystemtest.DevConfig()
			cfg.CarteraURL, cfg.CentralURL = "http://creditsystem.invalid/c", "http://creditsystem.invalid/c"
			c := newClient(t, cfg, creditsystem.WithHTTPClient(hc))
			err := tc.call(t.Context(), c)
			if tc.wantMissing == "" {
				if errors.Is(err, creditsystem.ErrInvalidRequest) || sent.Load() != 1 {
					t.Fatalf("err = %v, requests sent = %d; want the complete request sent", err, sent.Load())
				}
				return
			}
			if !errors.Is(err, creditsystem.ErrInvalidRequest) || !strings.Contains(err.Error(), "missing "+tc.wantMissing) {
				t.Fatalf("err = %v, want ErrInvalidRequest naming %s", err, tc.wantMissing)
			}
			if sent.Load() != 0 {
				t.Errorf("%d requests sent for an invalid request", sent.Load())
			}
		})
	}
}
