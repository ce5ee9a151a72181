package consumption

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// Every rule of an input holds for a Go caller, before anything reaches the creditsystem: one
// problem per broken rule, named by the specification's field.
func TestInputsValidate(t *testing.T) {
	d := decimal.RequireFromString
	neg := d("-1.00")
	autorizacion := AutorizacionInput{CodigoEmpresa: "000598", Identificacion: "0911111111", NumeroTarjeta: "4111",
		CodigoProducto: "001", Plazo: 6, Monto: d("100.00"), PuntoVenta: "PV-1"}
	fecha := Fecha{time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)}
	confirmacion := ConfirmacionInput{AutorizacionID: "A-1", Factura: Factura{NumeroFactura: "F-1", MontoFacturado: d("100.00"), FechaFactura: fecha}}
	cases := []struct {
		name string
		in   interface{ Validate() error }
		want []string
	}{
		{"valid authorization", autorizacion, nil},
		{"negative amount, bad term, bad down payment", func() AutorizacionInput {
			in := autorizacion
			in.Monto, in.Plazo, in.CuotaInicial = d("-100.00"), 0, &neg
			return in
		}(), []string{"plazo must be at least 1", "monto must be greater than zero", "cuota_inicial must not be negative"}},
		{"amount with three decimals and a term beyond xs:int", func() AutorizacionInput {
			in := autorizacion
			in.Monto, in.Plazo = d("100.001"), MaxInt+1
			return in
		}(), []string{"plazo must be at most 2147483647", "monto must have at most 2 decimal places"}},
		{"amount beyond decimal(18,2) and a bad article", func() AutorizacionInput {
			in := autorizacion
			in.Monto = d("12345678901234567.00")
			in.Items = []Articulo{{TextoArticulo: " ", Cantidad: 0, Precio: neg, Caracteristicas: "A:1,B:2"}}
			return in
		}(), []string{"monto must have at most 16 digits before the decimal point", "items[0].texto_articulo is required",
			"items[0].cantidad must be at least 1", "items[0].precio must not be negative", "items[0].caracteristicas must be pairs <code>:<value> joined by -"}},
		{"missing fields", AutorizacionInput{Plazo: 1, Monto: d("1")}, []string{"codigo_empresa is required", "identificacion is required",
			"numero_tarjeta is required", "codigo_producto is required", "punto_venta is required"}},
		{"valid confirmation", confirmacion, nil},
		{"confirmation before 1900 with negative VAT", func() ConfirmacionInput {
			in := confirmacion
			in.Factura.FechaFactura = Fecha{time.Date(1899, 12, 31, 0, 0, 0, 0, time.UTC)}
			in.Factura.ValorIVA = &neg
			return in
		}(), []string{"fecha_factura must be a date from 1900-01-01 on", "valor_iva must not be negative"}},
		{"confirmation without a date or amount", ConfirmacionInput{AutorizacionID: "A-1", Factura: Factura{NumeroFactura: "F"}},
			[]string{"monto_facturado must be greater than zero", "fecha_factura must be a date from 1900-01-01 on"}},
		{"financing of zero", FinanciacionInput{CodigoEmpresa: "E", NumeroTarjeta: "T", CodigoProducto: "001", CodigoTipoCupo: "001", Monto: d("0.00")},
			[]string{"monto must be greater than zero"}},
		{"credit-line query too long", CupoInput{CodigoEmpresa: "000598", Identificacion: string(make([]byte, 51))},
			[]string{"identificacion must be at most 50 characters long"}},
		{"otp missing", OTPInput{AutorizacionID: "A-1"}, []string{"otp is required"}},
		{"reversal without authorization", ReversoInput{NumeroTarjeta: "T"}, []string{"autorizacion_id is required"}},
		{"consumption reversal with a long card", ReversoConsumoInput{AutorizacionID: "A", NumeroTarjeta: "123456789012345678901"},
			[]string{"numero_tarjeta must be at most 20 characters long"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.in.Validate()
			var got []string
			var ve *ValidationError
			if errors.As(err, &ve) {
				got = ve.Strings()
			} else if err != nil {
				t.Fatalf("err %v is not a *ValidationError", err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("problems\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
