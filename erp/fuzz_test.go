package erp

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// FuzzDecodeLookup feeds arbitrary answers to the lookup decoder: it never panics, and a
// result it accepts as found always has a client with a codigo_cliente.
func FuzzDecodeLookup(f *testing.F) {
	for _, seed := range []string{
		`{"error_api":false,"mensaje":"cliente no encontrado","encontrado":false,"cliente":null}`,
		`{"error_api":false,"encontrado":true,"cliente":{"codigo_cliente":"C-1","numero_telefono_1":null,"inactivo":1}}`,
		`{"encontrado":true,"cliente":{}}`,
		`{"encontrado":"1"}`,
		`[]`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, err := decodeLookup(raw, 200)
		if err != nil {
			if !errors.Is(err, ErrUndecodable) {
				t.Fatalf("error %v does not wrap ErrUndecodable", err)
			}
			return
		}
		if res.Found && (res.Client == nil || res.Client.CodigoCliente == "") {
			t.Fatalf("found without codigo_cliente: %+v", res)
		}
		if !res.Found && res.Client != nil {
			t.Fatalf("not found but a client: %+v", res.Client)
		}
	})
}

// FuzzSyncBody: whatever extra_fields and strings come in, the payload is either refused with
// ErrInvalidRequest or is a JSON object with the right operacion, the renamed phones and every
// extra field unchanged.
func FuzzSyncBody(f *testing.F) {
	f.Add("000598", "MARIA", "0102030405", "0991", `{"valor_1":12.50,"texto_1":"x"}`, 0)
	f.Add("1", "N", "I", "", `null`, 1)
	f.Add("1", "N", "I", "", `{"nombre_cliente":"X"}`, 0)
	f.Add("1", "N", "I", "", `{"a":1,"a":2}`, 1)
	f.Add("", "N", "I", "", ``, 3)
	f.Fuzz(func(t *testing.T, empresa, nombre, identificacion, telefono, extra string, op int) {
		p := ClientPayload{CodigoEmpresa: empresa, NombreCliente: nombre, Identificacion: identificacion,
			Telefono1: telefono, ExtraFields: json.RawMessage(extra)}
		body, err := syncBody(Operation(op), p)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("error %v does not wrap ErrInvalidRequest", err)
			}
			return
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("payload is not a JSON object: %v\n%s", err, body)
		}
		if string(got["operacion"]) != map[int]string{0: "0", 1: "1"}[op] {
			t.Fatalf("operacion = %s for op %d", got["operacion"], op)
		}
		if _, ok := got["telefono_1"]; ok {
			t.Fatal("telefono_1 sent under its public name")
		}
		if telefono != "" && got["numero_telefono_1"] == nil {
			t.Fatal("telefono_1 not sent as numero_telefono_1")
		}
		var extras map[string]json.RawMessage
		if json.Unmarshal([]byte(extra), &extras) == nil {
			for k, v := range extras {
				var want bytes.Buffer
				if err := json.Compact(&want, v); err != nil {
					t.Fatalf("extra field %s: %v", k, err)
				}
				if !bytes.Equal(got[k], want.Bytes()) {
					t.Fatalf("extra field %s = %s, want %s unchanged", k, got[k], want.Bytes())
				}
			}
		}
	})
}

// FuzzDecodeHandOver feeds arbitrary answers to the hand-over decoder: it never panics, an
// error wraps ErrUndecodable, and an accepted answer always has a document number and keeps
// the answer as received.
func FuzzDecodeHandOver(f *testing.F) {
	for _, seed := range []string{
		`{"error_api":false,"mensaje":"recibo emitido","numero_documento":"RC-100234","duplicado":false}`,
		`{"error_api":false,"mensaje":"documento ya emitido","numero_documento":"RC-100234","duplicado":true}`,
		`{"numero_documento":"NC-1","duplicado":1}`,
		`{"numero_documento":null}`,
		`{"numero_documento":" ","duplicado":"maybe"}`,
		`[]`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, err := decodeHandOver(raw, 200)
		if err != nil {
			if !errors.Is(err, ErrUndecodable) {
				t.Fatalf("error %v does not wrap ErrUndecodable", err)
			}
			return
		}
		if strings.TrimSpace(res.NumeroDocumento) == "" {
			t.Fatalf("accepted without numero_documento: %+v", res)
		}
		if !bytes.Equal(res.Raw, raw) {
			t.Fatalf("Raw = %s, want %s", res.Raw, raw)
		}
	})
}

var twoDecimals = regexp.MustCompile(`^-?[0-9]+\.[0-9]{2}$`)

// FuzzHandOverBody: whatever the input, the hand-over is either refused with ErrInvalidRequest
// or is a JSON object whose amounts are JSON numbers with exactly 2 decimals, equal to the
// decimals given.
func FuzzHandOverBody(f *testing.F) {
	f.Add("pago", int64(100234), "4000", "150.5", "2024-03-15", "100.25", "-5", "")
	f.Add("reverso", int64(1), "4000", "1e2", "2024-02-29", "0", "0.10", "motivo")
	f.Add("pago", int64(0), "", "0.001", "2024-13-01", "x", "1.234", "")
	f.Add("PAGO", int64(-1), " ", "-1", "", "1", "1", "")
	f.Fuzz(func(t *testing.T, event string, numero int64, tarjeta, valor, fecha, factura, rubro, motivo string) {
		dec := func(s string) decimal.Decimal {
			d, _ := decimal.NewFromString(s)
			if e := d.Exponent(); e > 30 || e < -30 {
				return decimal.Zero // 1e999999 would spend the run printing a million digits
			}
			return d
		}
		h := PaymentHandOver{Event: PaymentEvent(event), NumeroOperacion: numero, NumeroTarjeta: tarjeta,
			ValorPago: dec(valor), FechaPago: fecha, Motivo: motivo,
			Facturas: []PaymentInvoice{{NumeroFactura: "F-1", Valor: dec(factura)}},
			Rubros:   []PaymentRubro{{Codigo: "R", Valor: dec(rubro)}}}
		body, err := handOverBody(h)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("error %v does not wrap ErrInvalidRequest", err)
			}
			return
		}
		var got struct {
			Evento          string          `json:"evento"`
			NumeroOperacion int64           `json:"numero_operacion"`
			ValorPago       json.RawMessage `json:"valor_pago"`
			Facturas        []struct {
				Valor json.RawMessage `json:"valor"`
			} `json:"facturas"`
			Rubros []struct {
				Valor json.RawMessage `json:"valor"`
			} `json:"rubros"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("payload is not JSON: %v\n%s", err, body)
		}
		if got.Evento != event || got.NumeroOperacion != numero || numero <= 0 {
			t.Fatalf("evento %q numero %d sent for %q %d", got.Evento, got.NumeroOperacion, event, numero)
		}
		for _, a := range []struct {
			raw  json.RawMessage
			want decimal.Decimal
		}{{got.ValorPago, h.ValorPago}, {got.Facturas[0].Valor, h.Facturas[0].Valor}, {got.Rubros[0].Valor, h.Rubros[0].Valor}} {
			if !twoDecimals.Match(a.raw) || !dec(string(a.raw)).Equal(a.want) {
				t.Fatalf("amount %s sent for %s", a.raw, a.want)
			}
		}
	})
}
