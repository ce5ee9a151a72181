package erptest_test

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
)

func payment(numero int64, tarjeta string) erp.PaymentHandOver {
	return erp.PaymentHandOver{Event: erp.PaymentApplied, NumeroOperacion: numero, NumeroTarjeta: tarjeta,
		ValorPago: decimal.RequireFromString("10.5"), FechaPago: "2024-03-15",
		Facturas: []erp.PaymentInvoice{{NumeroFactura: "F-1", Valor: decimal.RequireFromString("10.5")}},
		Rubros:   []erp.PaymentRubro{{Codigo: "CAP", TipoDocumento: "FAC", Valor: decimal.RequireFromString("10.5")}}}
}

// postWithKey sends a raw hand-over body with an Idempotency-Key header (none when empty).
func postWithKey(t *testing.T, url, body, key string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b.String()
}

// TestHandOverChecks: the fake refuses a hand-over the way a strict ERP would (HTTP 400,
// error_api true, nothing issued) and accepts the documented shape from any HTTP client.
func TestHandOverChecks(t *testing.T) {
	const valid = `{"evento":"pago","numero_operacion":5,"numero_tarjeta":"4000","valor_pago":10.50,"fecha_pago":"2024-03-15",` +
		`"facturas":[{"numero_factura":"F-1","valor":10.50}],"rubros":[{"codigo":"CAP","tipo_documento":"FAC","valor":10.50}]}`
	// change replaces old by new in the valid body.
	change := func(old, new string) string {
		if !strings.Contains(valid, old) {
			t.Fatalf("%q not in the valid body", old)
		}
		return strings.Replace(valid, old, new, 1)
	}
	// withMotivo adds a motivo member to body.
	withMotivo := func(body, motivo string) string { return body[:len(body)-1] + `,"motivo":` + motivo + `}` }
	refused := func(mensaje string) string { return `{"error_api":true,"mensaje":"` + mensaje + `"}` + "\n" }
	cases := []struct {
		name, body, key string
		wantStatus      int
		wantBody        string
	}{
		{"valid, without Idempotency-Key", valid, "", 200,
			`{"error_api":false,"mensaje":"recibo emitido","numero_documento":"RC-5","duplicado":false}` + "\n"},
		{"reversal with motivo and the right key", withMotivo(change(`"pago"`, `"reverso"`), `"error"`), "reverso-5", 200, `{"error_api":false,"mensaje":"nota de credito emitida","numero_documento":"NC-5","duplicado":false}` + "\n"},
		{"operation 5 again, empty lists: a duplicate", change(`[{"numero_factura":"F-1","valor":10.50}],"rubros":[{"codigo":"CAP","tipo_documento":"FAC","valor":10.50}]`, `[],"rubros":[]`),
			"", 200, `{"error_api":false,"mensaje":"documento ya emitido","numero_documento":"RC-5","duplicado":true}` + "\n"},
		{"unknown member", change(`"fecha_pago"`, `"terminal":"T1","fecha_pago"`), "", 400, refused("campo desconocido: terminal")},
		{"public camelCase name", change(`"numero_tarjeta"`, `"numeroTarjeta"`), "", 400, refused("campo desconocido: numeroTarjeta")},
		{"unknown member in a factura", change(`"numero_factura":"F-1"`, `"numero_factura":"F-1","iva":1`), "", 400, refused("campo desconocido: facturas[0].iva")},
		{"unknown member in a rubro", change(`"codigo":"CAP"`, `"codigo":"CAP","tipoDocumento":"FAC"`), "", 400, refused("campo desconocido: rubros[0].tipoDocumento")},
		{"missing numero_operacion", change(`"numero_operacion":5,`, ``), "", 400, refused("falta numero_operacion")},
		{"missing facturas", change(`"facturas":[{"numero_factura":"F-1","valor":10.50}],`, ``), "", 400, refused("falta facturas")},
		{"missing tipo_documento", change(`"tipo_documento":"FAC",`, ``), "", 400, refused("falta rubros[0].tipo_documento")},
		{"valor_pago as a string", change(`"valor_pago":10.50`, `"valor_pago":"10.50"`), "", 400, refused("valor no numerico: valor_pago")},
		{"factura valor as a string", change(`"F-1","valor":10.50`, `"F-1","valor":"10.50"`), "", 400, refused("valor no numerico: facturas[0].valor")},
		{"rubro valor null", change(`"FAC","valor":10.50`, `"FAC","valor":null`), "", 400, refused("valor no numerico: rubros[0].valor")},
		{"valor_pago with 3 decimals", change(`"valor_pago":10.50`, `"valor_pago":10.505`), "", 400, refused("valor con mas de 2 decimales: valor_pago")},
		{"evento in capitals", change(`"pago"`, `"PAGO"`), "", 400, refused("evento debe ser pago o reverso")},
		{"numero_operacion as a string", change(`"numero_operacion":5`, `"numero_operacion":"5"`), "", 400, refused("numero_operacion debe ser un entero mayor que 0")},
		{"numero_operacion zero", change(`"numero_operacion":5`, `"numero_operacion":0`), "", 400, refused("numero_operacion debe ser un entero mayor que 0")},
		{"numero_operacion with decimals", change(`"numero_operacion":5`, `"numero_operacion":5.0`), "", 400, refused("numero_operacion debe ser un entero mayor que 0")},
		{"empty numero_tarjeta", change(`"numero_tarjeta":"4000"`, `"numero_tarjeta":""`), "", 400, refused("falta numero_tarjeta")},
		{"fecha_pago dd/mm/yyyy", change(`"2024-03-15"`, `"15/03/2024"`), "", 400, refused("fecha_pago debe ser aaaa-mm-dd")},
		{"facturas not a list", change(`"facturas":[{"numero_factura":"F-1","valor":10.50}]`, `"facturas":{}`), "", 400, refused("facturas debe ser una lista")},
		{"motivo as a number", withMotivo(valid, `1`), "", 400, refused("valor no textual: motivo")},
		{"Idempotency-Key of another operation", valid, "pago-6", 400, refused("Idempotency-Key pago-6 no corresponde a pago-5")},
		{"not JSON", `evento=pago`, "", 400, refused("cuerpo JSON invalido")},
	}
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := postWithKey(t, srv.URL+erp.DefaultPaymentsPath, tc.body, tc.key)
			if status != tc.wantStatus || body != tc.wantBody {
				t.Errorf("got %d %s\nwant %d %s", status, body, tc.wantStatus, tc.wantBody)
			}
		})
	}
	if got := srv.HandOvers(); len(got) != 2 || got[0].Event != erp.PaymentApplied || got[1].Event != erp.PaymentReversed || got[1].Motivo != "error" {
		t.Errorf("HandOvers = %+v, want the two valid ones only", got)
	}
	if n := srv.Calls(erp.OpHandOverPayment); n != len(cases) {
		t.Errorf("Calls = %d, want every request (%d)", n, len(cases))
	}
}

// TestHandOverReactions: scripted reactions and magic card numbers; only Process and
// LateSuccess issue a document.
func TestHandOverReactions(t *testing.T) {
	cases := []struct {
		name      string
		react     *erptest.Reaction
		tarjeta   string
		wantErr   func(error) bool
		wantIssue bool
	}{
		{"business error", ptr(erptest.BusinessError("tarjeta bloqueada")), "4000",
			func(err error) bool {
				var e *erp.Error
				return errors.As(err, &e) && e.IsErrorAPI() && e.Message == "tarjeta bloqueada"
			}, false},
		{"raw 503", ptr(erptest.Raw(503, "")), "4000",
			func(err error) bool { var e *erp.Error; return errors.As(err, &e) && e.HTTPStatus == 503 }, false},
		{"hang", ptr(erptest.Hang()), "4000", erp.IsTimeout, false},
		{"drop", ptr(erptest.Drop()), "4000", func(err error) bool { return erp.IsTransport(err) && !erp.IsTimeout(err) }, false},
		{"late success", ptr(erptest.LateSuccess()), "4000", erp.IsTimeout, true},
		{"process after the deadline", ptr(erptest.Process().After(1500 * time.Millisecond)), "4000", erp.IsTimeout, true},
		{"magic HTTP 500", nil, erptest.NumeroTarjetaServerError, func(err error) bool {
			var e *erp.Error
			return errors.As(err, &e) && e.HTTPStatus == 500 && e.Message == "error interno del ERP"
		}, false},
		{"magic timeout", nil, erptest.NumeroTarjetaTimeout, erp.IsTimeout, false},
		{"a scripted reaction comes before the magic value", ptr(erptest.BusinessError("antes")), erptest.NumeroTarjetaServerError,
			func(err error) bool {
				var e *erp.Error
				return errors.As(err, &e) && e.HTTPStatus == 200 && e.Message == "antes"
			}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := erptest.NewServer()
			t.Cleanup(srv.Close)
			if tc.react != nil {
				srv.Script(erp.OpHandOverPayment, *tc.react)
			}
			c, err := erp.New(srv.Config(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.HandOverPayment(t.Context(), payment(9, tc.tarjeta))
			if !tc.wantErr(err) {
				t.Fatalf("err = %v", err)
			}
			if tc.wantIssue {
				// The document was issued after the caller gave up: wait for it, then a retry
				// is a duplicate.
				for len(srv.HandOvers()) == 0 {
					time.Sleep(10 * time.Millisecond)
				}
				res, err := c.HandOverPayment(t.Context(), payment(9, tc.tarjeta))
				if err != nil || res.NumeroDocumento != "RC-9" || !res.Duplicate {
					t.Fatalf("retry = %+v, %v; want RC-9 as a duplicate", res, err)
				}
				return
			}
			if got := srv.HandOvers(); len(got) != 0 {
				t.Errorf("HandOvers = %+v, want none", got)
			}
		})
	}
}

// TestHandOversAreCopies: what HandOvers returns cannot change what the fake holds.
func TestHandOversAreCopies(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	if _, err := client(t, srv).HandOverPayment(t.Context(), payment(1, "4000")); err != nil {
		t.Fatal(err)
	}
	got := srv.HandOvers()
	got[0].Facturas[0].NumeroFactura = "CHANGED"
	if again := srv.HandOvers(); again[0].Facturas[0].NumeroFactura != "F-1" {
		t.Errorf("the fake's hand-over changed through a returned copy: %+v", again[0])
	}
}

func ptr[T any](v T) *T { return &v }
