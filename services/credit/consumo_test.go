package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/credit/consumption"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// End-to-end tests of the consumption module: HTTP in, SOAP on the wire to creditsystemtest,
// records in SQLite and PostgreSQL.

const consumoPrefix = "/api/v1/credigestion/consumo/"

var consumoEndpoints = []string{"cupo", "financiacion", "autorizacion", "otp", "confirmar", "reverso", "reverso-consumo"}

func (e *testEnv) consumo(endpoint string, body any) response {
	e.t.Helper()
	return e.do(http.MethodPost, consumoPrefix+endpoint, body, e.userToken())
}

// Test data. Card numbers differ from identifications so the card fallback is visible.
const (
	testIdentificacion = "0912345678"
	testTarjeta        = "4000123412341234"
)

func autorizacionBody(monto string) map[string]any {
	return map[string]any{
		"codigo_empresa": "000598", "identificacion": testIdentificacion, "numero_tarjeta": testTarjeta,
		"codigo_producto": "001", "plazo": 3, "monto": monto, "punto_venta": "PV-QUITO-01",
		"codigo_tipo_cupo": "001", "codigo_tipo_operacion": "001",
		"items": []map[string]any{{"texto_articulo": "Refrigeradora", "cantidad": 1, "precio": monto, "caracteristicas": "COLOR:BLANCO-CAP:300L"}},
	}
}

func confirmarBody(id, factura string) map[string]any {
	return map[string]any{
		"autorizacion_id": id, "numero_factura": factura, "monto_facturado": "300.00", "fecha_factura": "2026-01-15",
		"valor_iva": "39.13", "valor_comision": "0",
	}
}

// autorizar creates an authorization of 300.00 and returns its id.
func (e *testEnv) autorizar() string {
	e.t.Helper()
	r := e.consumo("autorizacion", autorizacionBody("300.00"))
	if r.Status != http.StatusOK {
		e.t.Fatalf("autorizacion = %d %s", r.Status, r.Body)
	}
	var m struct {
		ID string `json:"autorizacion_id"`
	}
	if err := json.Unmarshal(r.Body, &m); err != nil || m.ID == "" {
		e.t.Fatalf("autorizacion without autorizacion_id: %s", r.Body)
	}
	return m.ID
}

func (e *testEnv) record(id string) *consumption.Consumo {
	e.t.Helper()
	c := new(consumption.Consumo)
	if err := e.target.DB.NewSelect().Model(c).Where("autorizacion_id = ?", id).Scan(e.t.Context()); err != nil {
		e.t.Fatalf("load record %s: %v", id, err)
	}
	return c
}

func (e *testEnv) intentos(where string, args ...any) []consumption.Intento {
	e.t.Helper()
	var out []consumption.Intento
	if err := e.target.DB.NewSelect().Model(&out).Where(where, args...).Order("id").Scan(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *testEnv) lastField(t *testing.T, op, field string) string {
	t.Helper()
	req, ok := e.cs.LastRequest(op)
	if !ok {
		t.Fatalf("%s never reached the fake", op)
	}
	v, ok := req.Field(field)
	if !ok {
		t.Fatalf("%s sent without %s", op, field)
	}
	return v
}

func consumoExpect(t *testing.T, r response, status int) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	return r.JSON(t)
}

func jsonNum(t *testing.T, v any) string {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a JSON number", v, v)
	}
	return n.String()
}

// checkSuccessAnswer checks {success: true, estado, message} of otp/reverso/reverso-consumo.
func checkConsumoSuccess(t *testing.T, m map[string]any, id, estado string) {
	t.Helper()
	if m["success"] != true || m["estado"] != estado || m["autorizacion_id"] != id {
		t.Fatalf("answer %v, want success true, estado %s, autorizacion_id %s", m, estado, id)
	}
	if msg, _ := m["message"].(string); msg == "" {
		t.Fatalf("answer without message: %v", m)
	}
}

func TestConsumoFullFlowWithOTP(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)

		cupo := consumoExpect(t, env.consumo("cupo", map[string]any{
			"codigo_empresa": "000598", "identificacion": testIdentificacion, "numero_tarjeta": testTarjeta,
		}), 200)
		if cupo["numero_tarjeta"] != testTarjeta || cupo["cliente"] == nil {
			t.Fatalf("cupo answer %v", cupo)
		}
		lineas := cupo["cupos"].([]any)
		linea := lineas[0].(map[string]any)
		if jsonNum(t, linea["nCupoDisponible"]) != "5000.00" || jsonNum(t, linea["nCupoAsignado"]) != "5000.00" || jsonNum(t, linea["nCupoUtilizado"]) != "0.00" {
			t.Fatalf("credit line %v, want 5000.00 available of 5000.00", linea)
		}
		if linea["cCodigoTipoCupo"] == nil || linea["cDescripcionTipoCupo"] == nil {
			t.Fatalf("credit line without code/description: %v", linea)
		}
		ope := linea["operaciones"].([]any)[0].(map[string]any)
		if jsonNum(t, ope["nCupoDisponibleOpe"]) != "5000.00" || ope["cCodigoTipoOperacion"] == nil || ope["cDescripcionTipoOperacion"] == nil {
			t.Fatalf("operation group %v", ope)
		}
		for _, k := range []string{"fecha_activacion", "fecha_ultima_compra", "fecha_ultimo_pago"} {
			if _, ok := cupo[k]; !ok {
				t.Fatalf("cupo answer without %s: %v", k, cupo)
			}
		}

		fin := consumoExpect(t, env.consumo("financiacion", map[string]any{
			"codigo_empresa": "000598", "numero_tarjeta": testTarjeta, "codigo_producto": "001",
			"codigo_tipo_cupo": "001", "monto": "1200.00",
		}), 200)
		alts := fin["alternativas"].([]any)
		if len(alts) == 0 {
			t.Fatalf("financiacion without options: %v", fin)
		}
		sawOptional := false
		for _, a := range alts {
			alt := a.(map[string]any)
			for _, k := range []string{"plazo", "cuota_mensual", "interes_total", "deuda_total"} {
				if alt[k] == nil {
					t.Fatalf("option without %s: %v", k, alt)
				}
			}
			for _, k := range []string{"cuota_garantia_extendida", "cuota_entrada_minima"} {
				if _, ok := alt[k]; !ok {
					t.Fatalf("option without key %s: %v", k, alt)
				}
				if alt[k] != nil {
					sawOptional = true
				}
			}
		}
		if !sawOptional {
			t.Fatalf("no option carries the optional guarantee or down-payment fields: %v", alts)
		}

		auth := consumoExpect(t, env.consumo("autorizacion", autorizacionBody("300.00")), 200)
		id, _ := auth["autorizacion_id"].(string)
		if id == "" || auth["codigo_seguridad_enviado"] != true || auth["biometria_requerida"] != false || auth["estado"] != "AUTORIZADO" {
			t.Fatalf("autorizacion answer %v", auth)
		}
		jsonNum(t, auth["numero_operacion"])
		if card, _ := env.cs.Card(testTarjeta); !card.Disponible.Equal(consumoDec("4700")) {
			t.Fatalf("fake credit line after authorization %s, want 4700", card.Disponible)
		}

		otp := consumoExpect(t, env.consumo("otp", map[string]any{"autorizacion_id": id, "otp": "482913"}), 200)
		checkConsumoSuccess(t, otp, id, "OTP_RECIBIDO")
		// The OTP is kept sealed, never in clear, until the confirmation sends it.
		if rec := env.record(id); rec.Estado != consumption.EstadoOTPRecibido || rec.OTP != "" || rec.OTPSellado == "" ||
			strings.Contains(rec.OTPSellado, "482913") {
			t.Fatalf("record after /otp: estado %s otp %q sealed %q", rec.Estado, rec.OTP, rec.OTPSellado)
		}
		if n, err := tg.DB.NewSelect().Model((*consumption.Consumo)(nil)).
			Where("otp LIKE '%482913%' OR otp_sellado LIKE '%482913%' OR CAST(creditsystem_auth_response AS TEXT) LIKE '%482913%'").Count(t.Context()); err != nil || n != 0 {
			t.Fatalf("the OTP is stored in clear (%d rows, %v)", n, err)
		}

		conf := consumoExpect(t, env.consumo("confirmar", confirmarBody(id, "001-002-000000123")), 200)
		if conf["autorizacion_id"] != id || conf["estado"] != "CONSUMIDO" || conf["fecha_max_pago"] == nil {
			t.Fatalf("confirmar answer %v", conf)
		}
		jsonNum(t, conf["numero_operacion"])
		tabla := conf["tabla_amortizacion"].([]any)
		if len(tabla) != 3 {
			t.Fatalf("amortization table has %d installments, want the 3 of plazo", len(tabla))
		}
		cuota := tabla[0].(map[string]any)
		if jsonNum(t, cuota["numero_cuota"]) != "1" || cuota["fecha_vencimiento"] == nil {
			t.Fatalf("installment %v", cuota)
		}
		for _, k := range []string{"valor_capital", "valor_interes", "valor_cuota"} {
			jsonNum(t, cuota[k])
		}
		afectado := conf["cupos_afectados"].([]any)[0].(map[string]any)
		if afectado["cCodigoTipoCupo"] == nil || jsonNum(t, afectado["nCupoDisponible"]) != "4700.00" || jsonNum(t, afectado["nCupoUtilizado"]) != "300.00" {
			t.Fatalf("affected credit line %v", afectado)
		}
		if got := env.lastField(t, "GrabarConsumo", "cCodigoOtp"); got != "482913" {
			t.Fatalf("GrabarConsumo cCodigoOtp %q, want the registered OTP", got)
		}
		for field, want := range map[string]string{
			"cNumeroAutorizacion": id, "cNumeroFactura": "001-002-000000123", "nMontoFacturado": "300.00",
			"nMonto": "300.00", "nPlazo": "3", "cCodigoProducto": "001", "cNumeroTarjeta": testTarjeta,
			"cNumeroIdentificacion": testIdentificacion, "nValorIva": "39.13",
		} {
			if got := env.lastField(t, "GrabarConsumo", field); got != want {
				t.Fatalf("GrabarConsumo %s = %q, want %q (taken from the record or the request)", field, got, want)
			}
		}
		rec := env.record(id)
		if rec.Estado != consumption.EstadoConsumido || rec.NumeroFactura != "001-002-000000123" || rec.FechaFactura.String() != "2026-01-15" ||
			!rec.MontoFacturado.Valid || !rec.MontoFacturado.Decimal.Equal(consumoDec("300")) {
			t.Fatalf("record after confirmation: %+v", rec)
		}
		if rec.OTPRegistrado() {
			t.Fatalf("the OTP is kept after the confirmation: %q %q", rec.OTP, rec.OTPSellado)
		}
		checkRawUpstreamAnswer(t, rec.CreditsystemConsumoResponse, "cNumeroAutorizacion", id)
		checkRawUpstreamAnswer(t, rec.CreditsystemAuthResponse, "cNumeroAutorizacion", id)

		rev := consumoExpect(t, env.consumo("reverso-consumo", map[string]any{"autorizacion_id": id}), 200)
		checkConsumoSuccess(t, rev, id, "CONSUMO_REVERSADO")
		if rev["numero_factura"] != "001-002-000000123" {
			t.Fatalf("reverso-consumo numero_factura %v", rev["numero_factura"])
		}
		if got := env.lastField(t, "GrabarReversoConsumo", "cNumeroReferencia"); got != "001-002-000000123" {
			t.Fatalf("cNumeroReferencia %q, want the stored invoice", got)
		}
		if got := env.lastField(t, "GrabarReversoConsumo", "lAjusteConciliacion"); got != "false" {
			t.Fatalf("lAjusteConciliacion %q, want false", got)
		}
		if got := env.lastField(t, "GrabarReversoConsumo", "cNumeroTarjeta"); got != testTarjeta {
			t.Fatalf("reverso-consumo cNumeroTarjeta %q, want the record's card", got)
		}
		if rec := env.record(id); rec.Estado != consumption.EstadoConsumoReversado || rec.SourceSystem != "PLATFORM" ||
			rec.CreatedAt.IsZero() || rec.UpdatedAt.Before(rec.CreatedAt) {
			t.Fatalf("record after reversal: %+v", rec)
		}
		if card, _ := env.cs.Card(testTarjeta); !card.Disponible.Equal(consumoDec("5000")) {
			t.Fatalf("fake credit line after the consumption reversal %s, want 5000 back", card.Disponible)
		}

		var ops []string
		for _, in := range env.intentos("autorizacion_id = ?", id) {
			if in.Resultado != consumption.ResultadoOK || in.TerminadoAt.IsZero() || in.RequestID == "" {
				t.Fatalf("audited attempt %+v, want ok with end time and request id", in)
			}
			ops = append(ops, in.Operacion)
		}
		if want := []string{"GrabarAutorizacion", "GrabarConsumo", "GrabarReversoConsumo"}; !slices.Equal(ops, want) {
			t.Fatalf("audited attempts %v, want %v", ops, want)
		}
	})
}

func consumoDec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func expiredUserToken() (string, error) {
	return auth.SignUserToken([]byte(testJWTSecret), auth.Claims{
		Subject: "user-1", Username: "operador", ExpiresAt: time.Now().Add(-time.Hour),
	})
}

func checkRawUpstreamAnswer(t *testing.T, raw json.RawMessage, key, want string) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("raw answer %s: %v", raw, err)
	}
	if m[key] != want {
		t.Fatalf("raw answer %s: %s = %v, want %s", raw, key, m[key], want)
	}
	if _, ok := m["lError"]; !ok {
		t.Fatalf("raw answer %s lacks the upstream members", raw)
	}
}

func TestConsumoFlowWithoutOTP(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg, withEnv("CREDITSYSTEM_OTP_BYPASS", "BYP-7731"))
		id := env.autorizar()
		// Translation rule 2: no otp on the authorization sends the configured bypass code.
		if got := env.lastField(t, "GrabarAutorizacion", "cCodigoOtp"); got != "BYP-7731" {
			t.Fatalf("GrabarAutorizacion cCodigoOtp %q, want CREDITSYSTEM_OTP_BYPASS", got)
		}
		conf := consumoExpect(t, env.consumo("confirmar", confirmarBody(id, "F-100")), 200)
		if conf["estado"] != "CONSUMIDO" {
			t.Fatalf("confirmar answer %v", conf)
		}
		// Confirmation without a registered OTP sends 0.
		if got := env.lastField(t, "GrabarConsumo", "cCodigoOtp"); got != "0" {
			t.Fatalf("GrabarConsumo cCodigoOtp %q, want 0", got)
		}
		if rec := env.record(id); rec.Estado != consumption.EstadoConsumido || rec.OTPRegistrado() {
			t.Fatalf("record %+v", rec)
		}
		// The bypass code is a secret: it is in no audited summary.
		for _, in := range env.intentos("1 = 1") {
			if strings.Contains(string(in.Solicitud), "BYP-7731") {
				t.Fatalf("audit %s holds the OTP bypass code", in.Solicitud)
			}
		}

		// An otp given on the authorization is sent instead of the bypass code.
		body := autorizacionBody("10.00")
		body["otp"] = "777111"
		consumoExpect(t, env.consumo("autorizacion", body), 200)
		if got := env.lastField(t, "GrabarAutorizacion", "cCodigoOtp"); got != "777111" {
			t.Fatalf("GrabarAutorizacion cCodigoOtp %q, want the request's otp", got)
		}
	})
}

func TestConsumoReverso(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		cases := map[string]struct {
			withOTP bool
			body    func(id string) map[string]any
			tarjeta string
		}{
			"from AUTORIZADO, card from the record": {
				body:    func(id string) map[string]any { return map[string]any{"autorizacion_id": id} },
				tarjeta: testTarjeta,
			},
			// Not shown by the specification; its rules only forbid CONSUMIDO and REVERSADO.
			"from OTP_RECIBIDO, card from the request": {
				withOTP: true,
				body: func(id string) map[string]any {
					return map[string]any{"autorizacion_id": id, "numero_tarjeta": testTarjeta, "identificacion": testIdentificacion}
				},
				tarjeta: testTarjeta,
			},
		}
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				id := env.autorizar()
				if tc.withOTP {
					consumoExpect(t, env.consumo("otp", map[string]any{"autorizacion_id": id, "otp": "123123"}), 200)
				}
				m := consumoExpect(t, env.consumo("reverso", tc.body(id)), 200)
				checkConsumoSuccess(t, m, id, "REVERSADO")
				if got := env.lastField(t, "GrabarReversoAutorizacion", "cNumeroAutorizacion"); got != id {
					t.Fatalf("cNumeroAutorizacion %q", got)
				}
				if got := env.lastField(t, "GrabarReversoAutorizacion", "cNumeroTarjeta"); got != tc.tarjeta {
					t.Fatalf("cNumeroTarjeta %q, want %q", got, tc.tarjeta)
				}
				if got := env.lastField(t, "GrabarReversoAutorizacion", "cNumeroIdentificacion"); got != testIdentificacion {
					t.Fatalf("cNumeroIdentificacion %q", got)
				}
				if rec := env.record(id); rec.Estado != consumption.EstadoReversado {
					t.Fatalf("estado %s", rec.Estado)
				}
			})
		}
	})
}

// TestConsumoForbiddenTransitions drives a record into every state through the API and checks
// that each operation the specification's rules forbid there answers 400 naming the
// authorization and the state, without calling the creditsystem.
func TestConsumoForbiddenTransitions(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		reach := map[string][]string{
			"AUTORIZADO":        nil,
			"OTP_RECIBIDO":      {"otp"},
			"CONSUMIDO":         {"confirmar"},
			"REVERSADO":         {"reverso"},
			"CONSUMO_REVERSADO": {"confirmar", "reverso-consumo"},
		}
		forbidden := map[string][]string{
			"AUTORIZADO":        {"reverso-consumo"},
			"OTP_RECIBIDO":      {"otp", "reverso-consumo"},
			"CONSUMIDO":         {"otp", "confirmar", "reverso"},
			"REVERSADO":         {"otp", "confirmar", "reverso", "reverso-consumo"},
			"CONSUMO_REVERSADO": {"otp", "confirmar", "reverso", "reverso-consumo"},
		}
		upstream := map[string]string{"confirmar": "GrabarConsumo", "reverso": "GrabarReversoAutorizacion", "reverso-consumo": "GrabarReversoConsumo"}
		for estado, steps := range reach {
			for _, op := range forbidden[estado] {
				t.Run(op+" from "+estado, func(t *testing.T) {
					id := env.autorizar()
					for i, step := range steps {
						consumoExpect(t, env.consumo(step, consumoBody(step, id, i)), 200)
					}
					calls := env.cs.Calls(upstream[op])
					m := expectError(t, env.consumo(op, consumoBody(op, id, 9)), 400)
					msg, _ := m["message"].(string)
					if !strings.Contains(msg, id) || !strings.Contains(msg, estado) {
						t.Fatalf("message %q must name the authorization %s and the state %s", msg, id, estado)
					}
					if _, has := m["errors"]; has {
						t.Fatalf("a state error is not a validation error: %v", m)
					}
					if upstream[op] != "" && env.cs.Calls(upstream[op]) != calls {
						t.Fatalf("%s reached the creditsystem although the state forbids it", op)
					}
					if rec := env.record(id); string(rec.Estado) != estado {
						t.Fatalf("state moved to %s", rec.Estado)
					}
				})
			}
		}
	})
}

func consumoBody(op, id string, i int) map[string]any {
	switch op {
	case "otp":
		return map[string]any{"autorizacion_id": id, "otp": "654321"}
	case "confirmar":
		return confirmarBody(id, fmt.Sprintf("F-%s-%d", id, i))
	}
	return map[string]any{"autorizacion_id": id}
}

func TestConsumoValidation(t *testing.T) {
	env := newTestEnv(t, storagetest.SQLite(t))
	long := func(n int) string { return strings.Repeat("9", n) }
	cases := map[string]struct {
		endpoint string
		body     any
		want     []string
	}{
		"cupo empty object": {"cupo", map[string]any{}, []string{"codigo_empresa is required", "identificacion is required"}},
		"cupo too long": {"cupo", map[string]any{"codigo_empresa": long(21), "identificacion": long(51), "numero_tarjeta": long(21)},
			[]string{"codigo_empresa must be at most 20", "identificacion must be at most 50", "numero_tarjeta must be at most 20"}},
		"financiacion missing and wrong": {"financiacion", map[string]any{
			"codigo_empresa": "000598", "numero_tarjeta": testTarjeta, "codigo_producto": "0001", "codigo_tipo_operacion": "0001", "monto": "12,50",
			"items": []map[string]any{{"cantidad": 0, "precio": "x", "caracteristicas": "sin-pares"}},
		}, []string{"codigo_producto must be at most 3", "codigo_tipo_cupo is required", "codigo_tipo_operacion must be at most 3",
			"monto must be a numeric string", "items[0].texto_articulo is required", "items[0].cantidad must be at least 1",
			"items[0].precio must be a numeric string", "items[0].caracteristicas must be pairs"}},
		"autorizacion empty object": {"autorizacion", map[string]any{}, []string{
			"codigo_empresa is required", "identificacion is required", "numero_tarjeta is required", "codigo_producto is required",
			"plazo is required", "monto is required", "punto_venta is required"}},
		"autorizacion rules": {"autorizacion", map[string]any{
			"codigo_empresa": "000598", "identificacion": testIdentificacion, "numero_tarjeta": testTarjeta, "codigo_producto": "001",
			"plazo": 0, "monto": "abc", "punto_venta": long(51), "cuota_inicial": "1e3", "codigo_tipo_cupo": "1234",
			"items": []map[string]any{{"texto_articulo": "TV"}},
		}, []string{"plazo must be at least 1", "monto must be a numeric string", "punto_venta must be at most 50",
			"cuota_inicial must be a numeric string", "codigo_tipo_cupo must be at most 3", "items[0].cantidad is required", "items[0].precio is required"}},
		"autorizacion plazo not an integer": {"autorizacion", `{"plazo":"doce"}`, []string{"plazo must be an integer",
			"codigo_empresa is required", "identificacion is required", "numero_tarjeta is required", "codigo_producto is required",
			"monto is required", "punto_venta is required"}},
		// plazo and cantidad are xs:int upstream and plazo an INTEGER column: one more is refused
		// before the creditsystem grants what cannot be stored.
		"autorizacion plazo and cantidad beyond xs:int": {"autorizacion", func() map[string]any {
			b := autorizacionBody("100.00")
			b["plazo"] = int64(1) << 31
			b["items"] = []map[string]any{{"texto_articulo": "TV", "cantidad": int64(1) << 31, "precio": "100.00"}}
			return b
		}(), []string{"plazo must be at most 2147483647", "items[0].cantidad must be at most 2147483647"}},
		// monto and monto_facturado are DECIMAL(18,2) columns: a larger amount is refused before
		// the creditsystem could grant what cannot be stored.
		"autorizacion monto beyond decimal(18,2)": {"autorizacion", autorizacionBody("12345678901234567.00"),
			[]string{"monto must have at most 16 digits before the decimal point", "items[0].precio must have at most 16 digits before the decimal point"}},
		"otp missing":       {"otp", map[string]any{}, []string{"autorizacion_id is required", "otp is required"}},
		"otp too long":      {"otp", map[string]any{"autorizacion_id": long(51), "otp": long(11)}, []string{"autorizacion_id must be at most 50", "otp must be at most 10"}},
		"confirmar missing": {"confirmar", map[string]any{}, []string{"autorizacion_id is required", "numero_factura is required", "monto_facturado is required", "fecha_factura is required"}},
		"confirmar rules": {"confirmar", map[string]any{
			"autorizacion_id": "A", "numero_factura": long(51), "monto_facturado": "-", "fecha_factura": "2026-02-30",
			"valor_iva": "doce", "valor_comision": "1.2.3",
		}, []string{"numero_factura must be at most 50", "monto_facturado must be a numeric string", "fecha_factura must be a date in yyyy-mm-dd",
			"valor_iva must be a numeric string", "valor_comision must be a numeric string"}},
		"confirmar date layout":   {"confirmar", map[string]any{"autorizacion_id": "A", "numero_factura": "F", "monto_facturado": "1", "fecha_factura": "15/01/2026"}, []string{"fecha_factura must be"}},
		"reverso missing":         {"reverso", map[string]any{"numero_tarjeta": long(21), "identificacion": long(51)}, []string{"autorizacion_id is required", "numero_tarjeta must be at most 20", "identificacion must be at most 50"}},
		"reverso-consumo missing": {"reverso-consumo", map[string]any{"numero_tarjeta": long(21)}, []string{"autorizacion_id is required", "numero_tarjeta must be at most 20"}},
		"not JSON":                {"confirmar", `{"autorizacion_id":`, []string{"request body is not valid JSON"}},
		"empty body":              {"reverso", ``, []string{"request body is required"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var r response
			if s, ok := tc.body.(string); ok {
				r = env.do(http.MethodPost, consumoPrefix+tc.endpoint, []byte(s), env.userToken(), "Content-Type", "application/json")
			} else {
				r = env.consumo(tc.endpoint, tc.body)
			}
			m := expectError(t, r, 400)
			raw, _ := m["errors"].([]any)
			var got []string
			for _, e := range raw {
				got = append(got, e.(string))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("errors %q, want one entry per problem: %q", got, tc.want)
			}
			for _, w := range tc.want {
				if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, w) }) {
					t.Fatalf("errors %q lack %q", got, w)
				}
			}
		})
	}
	for _, ep := range []string{"cupo", "financiacion", "autorizacion"} {
		if n := env.cs.Calls(map[string]string{"cupo": "ConsultarTarjeta", "financiacion": "ConsultarAlternativaFinanciacion", "autorizacion": "GrabarAutorizacion"}[ep]); n != 0 {
			t.Fatalf("an invalid %s request reached the creditsystem (%d calls)", ep, n)
		}
	}
}

func TestConsumoAuthentication(t *testing.T) {
	env := newTestEnv(t, storagetest.SQLite(t))
	expired, err := expiredUserToken()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"no header":         "",
		"service key":       env.serviceKey(),
		"invalid token":     "Bearer not-a-jwt",
		"expired token":     "Bearer " + expired,
		"basic credentials": "Basic dXNlcjpwYXNz",
	}
	for _, ep := range consumoEndpoints {
		for name, authz := range cases {
			t.Run(ep+"/"+name, func(t *testing.T) {
				expectError(t, env.do(http.MethodPost, consumoPrefix+ep, autorizacionBody("1.00"), authz), 401)
			})
		}
	}
	if n := env.cs.Calls("GrabarAutorizacion") + env.cs.Calls("ConsultarTarjeta"); n != 0 {
		t.Fatalf("unauthenticated requests reached the creditsystem (%d calls)", n)
	}
}

func TestConsumoNotFound(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		for _, ep := range []string{"otp", "confirmar", "reverso", "reverso-consumo"} {
			t.Run("unknown authorization/"+ep, func(t *testing.T) {
				m := expectError(t, env.consumo(ep, consumoBody(ep, "AUT-NOPE-1", 0)), 404)
				if msg, _ := m["message"].(string); !strings.Contains(msg, "AUT-NOPE-1") {
					t.Fatalf("404 message %q must name the authorization", msg)
				}
			})
		}
		t.Run("customer without card on cupo, card fallback to identificacion", func(t *testing.T) {
			expectError(t, env.consumo("cupo", map[string]any{"codigo_empresa": "000598", "identificacion": creditsystemtest.IdentificacionCardNotFound}), 404)
			if got := env.lastField(t, "ConsultarTarjeta", "cNumeroTarjeta"); got != creditsystemtest.IdentificacionCardNotFound {
				t.Fatalf("cNumeroTarjeta %q, want the identificacion", got)
			}
		})
		t.Run("customer without card on autorizacion", func(t *testing.T) {
			body := autorizacionBody("100.00")
			body["identificacion"] = creditsystemtest.IdentificacionCardNotFound
			expectError(t, env.consumo("autorizacion", body), 404)
			var n int
			n, err := tg.DB.NewSelect().Model((*consumption.Consumo)(nil)).Where("identificacion = ?", creditsystemtest.IdentificacionCardNotFound).Count(t.Context())
			if err != nil || n != 0 {
				t.Fatalf("%d records for a refused authorization (%v)", n, err)
			}
		})
	})
}

// upstreamMessage checks the 502 body {message: {message, upstreamMessage, operation, upstreamCode}}.
func expectUpstream502(t *testing.T, r response, operation, code string) map[string]any {
	t.Helper()
	m := expectError(t, r, 502)
	msg, ok := m["message"].(map[string]any)
	if !ok {
		t.Fatalf("502 message is not the upstream object: %s", r.Body)
	}
	if msg["operation"] != operation || msg["upstreamCode"] != code {
		t.Fatalf("upstream message %v, want operation %s code %s", msg, operation, code)
	}
	for _, k := range []string{"message", "upstreamMessage"} {
		if s, _ := msg[k].(string); s == "" {
			t.Fatalf("upstream message without %s: %v", k, msg)
		}
	}
	return msg
}

func TestConsumoUpstreamRejection(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		t.Run("insufficient credit line on autorizacion", func(t *testing.T) {
			expectUpstream502(t, env.consumo("autorizacion", autorizacionBody("666.66")), "GrabarAutorizacion", "51")
			n, _ := tg.DB.NewSelect().Model((*consumption.Consumo)(nil)).Count(t.Context())
			if n != 0 {
				t.Fatalf("%d records after a refused authorization", n)
			}
			in := env.intentos("operacion = ?", "GrabarAutorizacion")
			last := in[len(in)-1]
			if last.Resultado != consumption.ResultadoRechazado || last.CodigoUpstream == nil || *last.CodigoUpstream != 51 || last.MensajeUpstream == "" {
				t.Fatalf("audited attempt %+v, want rejected with code 51", last)
			}
		})
		t.Run("invalid OTP on confirmar leaves the record as it was", func(t *testing.T) {
			id := env.autorizar()
			consumoExpect(t, env.consumo("otp", map[string]any{"autorizacion_id": id, "otp": creditsystemtest.OTPInvalid}), 200)
			expectUpstream502(t, env.consumo("confirmar", confirmarBody(id, "F-OTP")), "GrabarConsumo", "60")
			if rec := env.record(id); rec.Estado != consumption.EstadoOTPRecibido || rec.OperacionEnCurso != "" || rec.NumeroFactura != "" {
				t.Fatalf("record after a rejected confirmation: %+v", rec)
			}
			// The claim was released: the authorization can still be reversed.
			consumoExpect(t, env.consumo("reverso", map[string]any{"autorizacion_id": id}), 200)
		})
		t.Run("SOAP fault on confirmar, then a good confirmation", func(t *testing.T) {
			id := env.autorizar()
			msg := expectUpstream502(t, env.consumo("confirmar", confirmarBody(id, creditsystemtest.NumeroFacturaFault)), "GrabarConsumo", "a:InternalServiceFault")
			if s, _ := msg["upstreamMessage"].(string); !strings.Contains(s, creditsystemtest.NumeroFacturaFault) {
				t.Fatalf("upstreamMessage %q, want the faultstring", s)
			}
			if rec := env.record(id); rec.Estado != consumption.EstadoAutorizado || rec.OperacionEnCurso != "" {
				t.Fatalf("record after a fault: %+v", rec)
			}
			consumoExpect(t, env.consumo("confirmar", confirmarBody(id, "F-OK")), 200)
			var results []consumption.Resultado
			for _, in := range env.intentos("autorizacion_id = ? AND operacion = ?", id, "GrabarConsumo") {
				results = append(results, in.Resultado)
			}
			if !slices.Equal(results, []consumption.Resultado{consumption.ResultadoFault, consumption.ResultadoOK}) {
				t.Fatalf("audited confirmations %v, want fault then ok", results)
			}
		})
		t.Run("scripted rejection of reverso and reverso-consumo", func(t *testing.T) {
			id := env.autorizar()
			env.cs.Script("GrabarReversoAutorizacion", creditsystemtest.BusinessError(21, "Autorización bloqueada"))
			m := expectUpstream502(t, env.consumo("reverso", map[string]any{"autorizacion_id": id}), "GrabarReversoAutorizacion", "21")
			if m["upstreamMessage"] != "Autorización bloqueada" {
				t.Fatalf("upstreamMessage %v", m["upstreamMessage"])
			}
			consumoExpect(t, env.consumo("confirmar", confirmarBody(id, "F-REJ")), 200)
			env.cs.Script("GrabarReversoConsumo", creditsystemtest.BusinessError(23, "Consumo no encontrado"))
			expectUpstream502(t, env.consumo("reverso-consumo", map[string]any{"autorizacion_id": id}), "GrabarReversoConsumo", "23")
			if rec := env.record(id); rec.Estado != consumption.EstadoConsumido {
				t.Fatalf("estado %s after a rejected consumption reversal", rec.Estado)
			}
		})
		t.Run("rejection on cupo and financiacion", func(t *testing.T) {
			env.cs.Script("ConsultarTarjeta", creditsystemtest.BusinessError(99, "Servicio en mantenimiento"))
			expectUpstream502(t, env.consumo("cupo", map[string]any{"codigo_empresa": "000598", "identificacion": testIdentificacion}), "ConsultarTarjeta", "99")
			env.cs.Script("ConsultarAlternativaFinanciacion", creditsystemtest.BusinessError(98, "Producto no financiable"))
			expectUpstream502(t, env.consumo("financiacion", map[string]any{
				"codigo_empresa": "000598", "numero_tarjeta": testTarjeta, "codigo_producto": "001", "codigo_tipo_cupo": "001", "monto": "100",
			}), "ConsultarAlternativaFinanciacion", "98")
		})
	})
}

// expectTimeout checks the 504 naming the operation.
func expectTimeout504(t *testing.T, r response, operation string) {
	t.Helper()
	m := expectError(t, r, 504)
	if msg, _ := m["message"].(string); !strings.Contains(msg, operation) {
		t.Fatalf("504 message %q must name %s", msg, operation)
	}
}

// shortTimeout keeps the tests that wait for upstream timeouts short.
var shortTimeout = withEnv("CREDITSYSTEM_TIMEOUT", "1.5")

func TestConsumoTimeout(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg, shortTimeout)
		t.Run("autorizacion 504.04: 504, no record, audited, not retried", func(t *testing.T) {
			r := env.do(http.MethodPost, consumoPrefix+"autorizacion", autorizacionBody("504.04"), env.userToken(), "X-Request-Id", "req-timeout-1")
			expectTimeout504(t, r, "GrabarAutorizacion")
			if n := env.cs.Calls("GrabarAutorizacion"); n != 1 {
				t.Fatalf("GrabarAutorizacion reached the fake %d times, want 1 (never retried)", n)
			}
			n, _ := tg.DB.NewSelect().Model((*consumption.Consumo)(nil)).Count(t.Context())
			if n != 0 {
				t.Fatalf("%d records after a timed-out authorization", n)
			}
			in := env.intentos("request_id = ?", "req-timeout-1")
			if len(in) != 1 || in[0].Resultado != consumption.ResultadoTimeout || in[0].TerminadoAt.IsZero() {
				t.Fatalf("audit of the timed-out authorization %+v", in)
			}
			var asked map[string]any
			if err := json.Unmarshal(in[0].Solicitud, &asked); err != nil || asked["monto"] != "504.04" || asked["otp"] != "bypass" {
				t.Fatalf("audited request %s", in[0].Solicitud)
			}
		})
		type step struct {
			endpoint, operation string
			prepare             []string
			outcome             creditsystemtest.Reaction
		}
		for name, tc := range map[string]step{
			"confirmar after OTP hangs":    {"confirmar", "GrabarConsumo", []string{"otp"}, creditsystemtest.Hang()},
			"confirmar late success":       {"confirmar", "GrabarConsumo", nil, creditsystemtest.LateSuccess()},
			"reverso after OTP hangs":      {"reverso", "GrabarReversoAutorizacion", []string{"otp"}, creditsystemtest.Hang()},
			"reverso-consumo late success": {"reverso-consumo", "GrabarReversoConsumo", []string{"confirmar"}, creditsystemtest.LateSuccess()},
			"confirmar connection dropped": {"confirmar", "GrabarConsumo", nil, creditsystemtest.Drop()},
		} {
			t.Run(name, func(t *testing.T) {
				id := env.autorizar()
				for i, p := range tc.prepare {
					consumoExpect(t, env.consumo(p, consumoBody(p, id, i)), 200)
				}
				before := env.record(id).Estado
				calls := env.cs.Calls(tc.operation)
				env.cs.Script(tc.operation, tc.outcome)
				r := env.consumo(tc.endpoint, consumoBody(tc.endpoint, id, 7))
				if name == "confirmar connection dropped" {
					if msg := expectUpstream502(t, r, tc.operation, ""); msg["upstreamMessage"] != "creditsystem unavailable" {
						t.Fatalf("upstreamMessage %v, want the generic text", msg["upstreamMessage"])
					}
				} else {
					expectTimeout504(t, r, tc.operation)
				}
				rec := env.record(id)
				if rec.Estado != before || rec.OperacionEnCurso != tc.operation || !rec.ResultadoDesconocido {
					t.Fatalf("record after an unknown outcome: estado %s marker %q unknown %v; want %s held by %s",
						rec.Estado, rec.OperacionEnCurso, rec.ResultadoDesconocido, before, tc.operation)
				}
				// Every later operation is a clear 409 until an operator reconciles; nothing is
				// sent upstream again.
				for i, ep := range []string{"otp", "confirmar", "reverso", "reverso-consumo", tc.endpoint} {
					m := expectError(t, env.consumo(ep, consumoBody(ep, id, 20+i)), 409)
					if msg, _ := m["message"].(string); !strings.Contains(msg, id) || !strings.Contains(msg, tc.operation) {
						t.Fatalf("409 message %q must name the authorization and %s", msg, tc.operation)
					}
				}
				if n := env.cs.Calls(tc.operation); n != calls+1 {
					t.Fatalf("%s reached the fake %d times, want exactly once (never retried)", tc.operation, n-calls)
				}
				in := env.intentos("autorizacion_id = ? AND operacion = ?", id, tc.operation)
				last := in[len(in)-1]
				want := consumption.ResultadoTimeout
				if name == "confirmar connection dropped" {
					want = consumption.ResultadoTransporte
				}
				if last.Resultado != want {
					t.Fatalf("audited attempt %s, want %s", last.Resultado, want)
				}
			})
		}
	})
}

// TestConsumoReconcile settles unknown outcomes the way an operator would, through the domain.
func TestConsumoReconcile(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg, shortTimeout)
		consumos := env.srv.consumos
		id := env.autorizar()
		env.cs.Script("GrabarConsumo", creditsystemtest.LateSuccess())
		expectTimeout504(t, env.consumo("confirmar", confirmarBody(id, "F-LATE")), "GrabarConsumo")
		// The fake applied it: the operator says so.
		rec, err := consumos.Reconciliar(t.Context(), id, true)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Estado != consumption.EstadoConsumido || rec.NumeroFactura != "F-LATE" || rec.OperacionEnCurso != "" {
			t.Fatalf("reconciled record %+v", rec)
		}
		consumoExpect(t, env.consumo("reverso-consumo", map[string]any{"autorizacion_id": id}), 200)

		id2 := env.autorizar()
		env.cs.Script("GrabarReversoAutorizacion", creditsystemtest.Hang())
		expectTimeout504(t, env.consumo("reverso", map[string]any{"autorizacion_id": id2}), "GrabarReversoAutorizacion")
		if _, err := consumos.Reconciliar(t.Context(), id2, false); err != nil {
			t.Fatal(err)
		}
		// Not applied: the authorization is free again and can be confirmed.
		consumoExpect(t, env.consumo("confirmar", confirmarBody(id2, "F-AFTER")), 200)
		var results []consumption.Resultado
		for _, in := range env.intentos("autorizacion_id = ?", id2) {
			results = append(results, in.Resultado)
		}
		want := []consumption.Resultado{consumption.ResultadoOK, consumption.ResultadoTimeout, consumption.ResultadoConciliadoNoAplicada, consumption.ResultadoOK}
		if !slices.Equal(results, want) {
			t.Fatalf("audit %v, want %v", results, want)
		}
		if _, err := consumos.Reconciliar(t.Context(), id2, true); err == nil {
			t.Fatal("reconciling a free record succeeded")
		}
	})
}

func TestConsumoNilNodesAreNull(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		body := `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>` +
			`<ConsultarTarjetaResponse xmlns="` + env.cs.Namespace() + `">` +
			`<ConsultarTarjetaResult xmlns:a="http://schemas.datacontract.org/2004/07/CreditSystem.Cartera.Modelos" xmlns:i="http://www.w3.org/2001/XMLSchema-instance">` +
			`<a:cCliente i:nil="true"/><a:cNumeroTarjeta>` + testTarjeta + `</a:cNumeroTarjeta><a:cTextoError i:nil="true"/>` +
			`<a:dFechaActivacion>2024-05-01T00:00:00</a:dFechaActivacion><a:dFechaUltimaCompra i:nil="true"/><a:dFechaUltimoPago></a:dFechaUltimoPago>` +
			`<a:lError>false</a:lError><a:nNumeroError>0</a:nNumeroError>` +
			`<a:oTipoCupoVm><a:TipoCupoVm><a:cCodigoTipoCupo>001</a:cCodigoTipoCupo><a:cDescripcionTipoCupo/>` +
			`<a:nCupoAsignado>5000.00</a:nCupoAsignado><a:nCupoDisponible>4000.5</a:nCupoDisponible><a:nCupoUtilizado i:nil="true"/>` +
			`<a:oTipoOperacionVm i:nil="true"/></a:TipoCupoVm></a:oTipoCupoVm>` +
			`</ConsultarTarjetaResult></ConsultarTarjetaResponse></s:Body></s:Envelope>`
		env.cs.Script("ConsultarTarjeta", creditsystemtest.Raw(200, body))
		r := env.consumo("cupo", map[string]any{"codigo_empresa": "000598", "identificacion": testIdentificacion, "numero_tarjeta": testTarjeta})
		m := consumoExpect(t, r, 200)
		if got := env.lastField(t, "ConsultarTarjeta", "cNumeroTarjeta"); got != testTarjeta {
			t.Fatalf("cNumeroTarjeta %q, want numero_tarjeta when given", got)
		}
		for _, k := range []string{"cliente", "fecha_ultima_compra", "fecha_ultimo_pago"} {
			if v, ok := m[k]; !ok || v != nil {
				t.Fatalf("%s = %v (present %v), want null: %s", k, v, ok, r.Body)
			}
		}
		if m["fecha_activacion"] != "2024-05-01" {
			t.Fatalf("fecha_activacion %v", m["fecha_activacion"])
		}
		linea := m["cupos"].([]any)[0].(map[string]any)
		for _, k := range []string{"cDescripcionTipoCupo", "nCupoUtilizado", "operaciones"} {
			if v, ok := linea[k]; !ok || v != nil {
				t.Fatalf("%s = %v (present %v), want null: %s", k, v, ok, r.Body)
			}
		}
		if jsonNum(t, linea["nCupoDisponible"]) != "4000.50" {
			t.Fatalf("nCupoDisponible %v", linea["nCupoDisponible"])
		}
		if !bytes.Contains(r.Body, []byte(`"cliente":null`)) {
			t.Fatalf("body %s", r.Body)
		}
	})
}

// post sends one request from a goroutine, reporting failures instead of stopping the test.
func (e *testEnv) postConsumo(client *http.Client, endpoint, token string, body any) (int, []byte, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequest(http.MethodPost, e.URL+consumoPrefix+endpoint, bytes.NewReader(raw))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

type consumoRaceResult struct {
	endpoint string
	status   int
	body     []byte
}

// race fires the requests at once and returns their answers.
func (e *testEnv) raceConsumo(t *testing.T, endpoints []string, body func(endpoint string, i int) any) []consumoRaceResult {
	t.Helper()
	token := e.userToken()
	client := &http.Client{Timeout: 10 * time.Second, Transport: contractOf(t).Transport(t, &http.Transport{MaxIdleConnsPerHost: len(endpoints)})}
	results := make([]consumoRaceResult, len(endpoints))
	errs := make([]error, len(endpoints))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, ep := range endpoints {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			status, b, err := e.postConsumo(client, ep, token, body(ep, i))
			results[i], errs[i] = consumoRaceResult{endpoint: ep, status: status, body: b}, err
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return results
}

// checkRace: exactly one 200, every other answer a 400 or 409 in the envelope.
func checkOneWinner(t *testing.T, results []consumoRaceResult) consumoRaceResult {
	t.Helper()
	var winners []consumoRaceResult
	for _, r := range results {
		switch r.status {
		case http.StatusOK:
			winners = append(winners, r)
		case http.StatusBadRequest, http.StatusConflict:
			var env map[string]any
			if err := json.Unmarshal(r.body, &env); err != nil || env["status"] != "error" {
				t.Fatalf("loser answer %d %s is not the envelope", r.status, r.body)
			}
		default:
			t.Fatalf("%s answered %d %s, want 200, 400 or 409", r.endpoint, r.status, r.body)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d requests succeeded, want exactly 1", len(winners))
	}
	return winners[0]
}

func TestConsumoConcurrency(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		const n = 20
		t.Run("20 confirmar", func(t *testing.T) {
			id := env.autorizar()
			before := env.cs.Calls("GrabarConsumo")
			// A slow creditsystem keeps the claim held while the others arrive.
			env.cs.Script("GrabarConsumo", creditsystemtest.Process().After(150*time.Millisecond))
			results := env.raceConsumo(t, slices.Repeat([]string{"confirmar"}, n), func(_ string, i int) any {
				return confirmarBody(id, fmt.Sprintf("F-RACE-%d", i))
			})
			checkOneWinner(t, results)
			if got := env.cs.Calls("GrabarConsumo") - before; got != 1 {
				t.Fatalf("GrabarConsumo reached the fake %d times, want exactly 1", got)
			}
			if rec := env.record(id); rec.Estado != consumption.EstadoConsumido || rec.OperacionEnCurso != "" {
				t.Fatalf("record after the race: %+v", rec)
			}
		})
		t.Run("20 reverso", func(t *testing.T) {
			id := env.autorizar()
			before := env.cs.Calls("GrabarReversoAutorizacion")
			env.cs.Script("GrabarReversoAutorizacion", creditsystemtest.Process().After(150*time.Millisecond))
			results := env.raceConsumo(t, slices.Repeat([]string{"reverso"}, n), func(_ string, _ int) any {
				return map[string]any{"autorizacion_id": id}
			})
			checkOneWinner(t, results)
			if got := env.cs.Calls("GrabarReversoAutorizacion") - before; got != 1 {
				t.Fatalf("GrabarReversoAutorizacion reached the fake %d times, want exactly 1", got)
			}
			if rec := env.record(id); rec.Estado != consumption.EstadoReversado {
				t.Fatalf("estado %s", rec.Estado)
			}
		})
		t.Run("confirmar racing reverso", func(t *testing.T) {
			id := env.autorizar()
			confirms, reversals := env.cs.Calls("GrabarConsumo"), env.cs.Calls("GrabarReversoAutorizacion")
			eps := make([]string, n)
			for i := range eps {
				eps[i] = []string{"confirmar", "reverso"}[i%2]
			}
			results := env.raceConsumo(t, eps, func(ep string, i int) any { return consumoBody(ep, id, i) })
			winner := checkOneWinner(t, results)
			confirms = env.cs.Calls("GrabarConsumo") - confirms
			reversals = env.cs.Calls("GrabarReversoAutorizacion") - reversals
			if confirms+reversals != 1 {
				t.Fatalf("%d GrabarConsumo and %d GrabarReversoAutorizacion reached the fake, want one call in all", confirms, reversals)
			}
			want := map[string]consumption.Estado{"confirmar": consumption.EstadoConsumido, "reverso": consumption.EstadoReversado}[winner.endpoint]
			if rec := env.record(id); rec.Estado != want || rec.OperacionEnCurso != "" {
				t.Fatalf("record %s after %s won, want %s", rec.Estado, winner.endpoint, want)
			}
		})
	})
}

// TestConsumoFechaFacturaOutOfRange: an invoice date PostgreSQL cannot store (year 0000) or that
// the record would store as no date (0001-01-01) is a 400 before GrabarConsumo; it used to be
// confirmed upstream and then fail to store (500, authorization held).
func TestConsumoFechaFacturaOutOfRange(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		id := env.autorizar()
		calls := env.cs.Calls("GrabarConsumo")
		for _, fecha := range []string{"0000-01-01", "0001-01-01", "1899-12-31"} {
			body := confirmarBody(id, "F-FECHA")
			body["fecha_factura"] = fecha
			m := expectError(t, env.consumo("confirmar", body), 400)
			if errs, _ := m["errors"].([]any); len(errs) != 1 || errs[0] != "fecha_factura must be a date from 1900-01-01 on" {
				t.Fatalf("fecha_factura %s: errors %v, want the one date problem", fecha, m["errors"])
			}
		}
		if n := env.cs.Calls("GrabarConsumo"); n != calls {
			t.Fatalf("an out-of-range invoice date reached the creditsystem (%d calls)", n-calls)
		}
		if rec := env.record(id); rec.Estado != consumption.EstadoAutorizado || rec.OperacionEnCurso != "" {
			t.Fatalf("record after refused dates: estado %s marker %q", rec.Estado, rec.OperacionEnCurso)
		}
		body := confirmarBody(id, "F-FECHA")
		body["fecha_factura"] = "1900-01-01"
		consumoExpect(t, env.consumo("confirmar", body), 200)
		if rec := env.record(id); rec.Estado != consumption.EstadoConsumido || rec.FechaFactura.String() != "1900-01-01" {
			t.Fatalf("record after confirmation: estado %s fecha %s", rec.Estado, rec.FechaFactura)
		}
	})
}

// TestConsumoCaracteristicas: an Article's caracteristicas are pairs <code>:<value> joined by
// "-"; pairs joined by anything else, or a pair missing its code or value, are one 400 entry.
func TestConsumoCaracteristicas(t *testing.T) {
	env := newTestEnv(t, storagetest.SQLite(t))
	const problem = "items[0].caracteristicas must be pairs <code>:<value> joined by -"
	cases := map[string]struct {
		value string
		ok    bool
	}{
		"one pair":            {"COLOR:BLANCO", true},
		"two pairs":           {"COLOR:BLANCO-CAP:300L", true},
		"joined by comma":     {"COLOR:BLANCO,CAP:300L", false},
		"joined by semicolon": {"COLOR:BLANCO;CAP:300L", false},
		"pair without value":  {"COLOR:", false},
		"pair without code":   {":BLANCO", false},
		"trailing separator":  {"COLOR:BLANCO-", false},
		"no colon":            {"COLOR", false},
		"blank value":         {"COLOR: -CAP:300L", false},
		"three pairs":         {"A:1-B:2-C:3", true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := env.consumo("financiacion", map[string]any{
				"codigo_empresa": "000598", "numero_tarjeta": testTarjeta, "codigo_producto": "001", "codigo_tipo_cupo": "001", "monto": "100.00",
				"items": []map[string]any{{"texto_articulo": "TV", "cantidad": 1, "precio": "100.00", "caracteristicas": tc.value}},
			})
			if tc.ok {
				consumoExpect(t, r, 200)
				return
			}
			m := expectError(t, r, 400)
			if errs, _ := m["errors"].([]any); len(errs) != 1 || errs[0] != problem {
				t.Fatalf("caracteristicas %q: errors %v, want [%q]", tc.value, m["errors"], problem)
			}
		})
	}
}

// cupoAnswer is a ConsultarTarjeta answer whose oTipoCupoVm holds lineas (raw TipoCupoVm
// members, or "" for no oTipoCupoVm at all).
func cupoAnswer(ns, lineas string) []byte {
	cupos := `<a:oTipoCupoVm i:nil="true"/>`
	if lineas != "" {
		cupos = `<a:oTipoCupoVm>` + lineas + `</a:oTipoCupoVm>`
	}
	return []byte(`<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>` +
		`<ConsultarTarjetaResponse xmlns="` + ns + `">` +
		`<ConsultarTarjetaResult xmlns:a="http://schemas.datacontract.org/2004/07/CreditSystem.Cartera.Modelos" xmlns:i="http://www.w3.org/2001/XMLSchema-instance">` +
		`<a:cCliente>ANA PEREZ</a:cCliente><a:cNumeroTarjeta>` + testTarjeta + `</a:cNumeroTarjeta>` +
		`<a:dFechaActivacion>2024-05-01T00:00:00</a:dFechaActivacion><a:dFechaUltimaCompra>2025-12-24T00:00:00</a:dFechaUltimaCompra>` +
		`<a:dFechaUltimoPago>2026-01-05T00:00:00</a:dFechaUltimoPago><a:lError>false</a:lError><a:nNumeroError>0</a:nNumeroError>` +
		cupos + `</ConsultarTarjetaResult></ConsultarTarjetaResponse></s:Body></s:Envelope>`)
}

func cupoLinea(codigo, desc, asignado, disponible, utilizado, operaciones string) string {
	ops := `<a:oTipoOperacionVm i:nil="true"/>`
	if operaciones != "" {
		ops = `<a:oTipoOperacionVm>` + operaciones + `</a:oTipoOperacionVm>`
	}
	return `<a:TipoCupoVm><a:cCodigoTipoCupo>` + codigo + `</a:cCodigoTipoCupo><a:cDescripcionTipoCupo>` + desc + `</a:cDescripcionTipoCupo>` +
		`<a:nCupoAsignado>` + asignado + `</a:nCupoAsignado><a:nCupoDisponible>` + disponible + `</a:nCupoDisponible>` +
		`<a:nCupoUtilizado>` + utilizado + `</a:nCupoUtilizado>` + ops + `</a:TipoCupoVm>`
}

func cupoOperacion(codigo, desc, disponible string) string {
	return `<a:TipoOperacionVm><a:cCodigoTipoOperacion>` + codigo + `</a:cCodigoTipoOperacion>` +
		`<a:cDescripcionTipoOperacion>` + desc + `</a:cDescripcionTipoOperacion>` +
		`<a:nCupoDisponibleOpe>` + disponible + `</a:nCupoDisponibleOpe></a:TipoOperacionVm>`
}

// TestConsumoCupoFlatFields: the answer carries the flat fields the specification lists, from
// the first credit line and its first operation type, beside the nested cupos. Nothing is
// stored by /cupo, so one engine is enough.
func TestConsumoCupoFlatFields(t *testing.T) {
	env := newTestEnv(t, storagetest.SQLite(t))
	ns := env.cs.Namespace()
	// Amounts beyond float64's 15-16 significant digits show any float64 on the way.
	twoLines := cupoLinea("001", "CUPO DIRECTO", "9999999999999999.99", "1234567890123456.78", "8765432109876543.21",
		cupoOperacion("010", "CONTADO", "1234567890123456.71")+cupoOperacion("020", "DIFERIDO", "5.00")) +
		cupoLinea("002", "CUPO AVANCE", "100.00", "50.00", "50.00", cupoOperacion("030", "AVANCE", "50.00"))
	cases := []struct {
		name   string
		answer []byte
		want   map[string]string // flat field -> JSON text
		cupos  int
	}{
		{"first line and its first operation", cupoAnswer(ns, twoLines), map[string]string{
			"cCodigoTipoCupo": `"001"`, "cDescripcionTipoCupo": `"CUPO DIRECTO"`,
			"nCupoDisponible": `1234567890123456.78`, "nCupoAsignado": `9999999999999999.99`, "nCupoUtilizado": `8765432109876543.21`,
			"cCodigoTipoOperacion": `"010"`, "cDescripcionTipoOperacion": `"CONTADO"`, "nCupoDisponibleOpe": `1234567890123456.71`,
		}, 2},
		{"line without operation types", cupoAnswer(ns, cupoLinea("001", "CUPO DIRECTO", "10", "2.5", "7.5", "")), map[string]string{
			"cCodigoTipoCupo": `"001"`, "cDescripcionTipoCupo": `"CUPO DIRECTO"`,
			"nCupoDisponible": `2.50`, "nCupoAsignado": `10.00`, "nCupoUtilizado": `7.50`,
			"cCodigoTipoOperacion": `null`, "cDescripcionTipoOperacion": `null`, "nCupoDisponibleOpe": `null`,
		}, 1},
		{"no credit lines", cupoAnswer(ns, ""), map[string]string{
			"cCodigoTipoCupo": `null`, "cDescripcionTipoCupo": `null`,
			"nCupoDisponible": `null`, "nCupoAsignado": `null`, "nCupoUtilizado": `null`,
			"cCodigoTipoOperacion": `null`, "cDescripcionTipoOperacion": `null`, "nCupoDisponibleOpe": `null`,
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env.cs.Script("ConsultarTarjeta", creditsystemtest.Raw(200, string(tc.answer)))
			r := env.consumo("cupo", map[string]any{"codigo_empresa": "000598", "identificacion": testIdentificacion, "numero_tarjeta": testTarjeta})
			consumoExpect(t, r, 200)
			var m map[string]json.RawMessage
			if err := json.Unmarshal(r.Body, &m); err != nil {
				t.Fatal(err)
			}
			for k, want := range tc.want {
				if got, ok := m[k]; !ok || string(got) != want {
					t.Errorf("%s = %s (present %v), want %s", k, got, ok, want)
				}
			}
			for k, want := range map[string]string{"cliente": `"ANA PEREZ"`, "numero_tarjeta": `"` + testTarjeta + `"`,
				"fecha_activacion": `"2024-05-01"`, "fecha_ultima_compra": `"2025-12-24"`, "fecha_ultimo_pago": `"2026-01-05"`} {
				if string(m[k]) != want {
					t.Errorf("%s = %s, want %s", k, m[k], want)
				}
			}
			var cupos []json.RawMessage
			if err := json.Unmarshal(m["cupos"], &cupos); err != nil || len(cupos) != tc.cupos {
				t.Fatalf("cupos = %s, want %d nested lines", m["cupos"], tc.cupos)
			}
		})
	}
}

// TestConsumoMoneyInputs: every monetary input has at most two decimals and 16 integer digits;
// the operation's amount is greater than zero and the others are not negative. A violation is
// a 400 naming the field, reaches no creditsystem operation and stores nothing.
func TestConsumoMoneyInputs(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		id := env.autorizar()
		before := env.record(id)
		with := func(base map[string]any, key string, v any) map[string]any {
			b := map[string]any{}
			for k, x := range base {
				b[k] = x
			}
			b[key] = v
			return b
		}
		item := func(precio string) []map[string]any {
			return []map[string]any{{"texto_articulo": "TV", "cantidad": 1, "precio": precio}}
		}
		financiacion := map[string]any{"codigo_empresa": "000598", "numero_tarjeta": testTarjeta, "codigo_producto": "001",
			"codigo_tipo_cupo": "001", "monto": "100.00"}
		autorizacion := autorizacionBody("100.00")
		confirmar := confirmarBody(id, "F-MONEY-1")
		cases := []struct {
			name     string
			endpoint string
			body     map[string]any
			want     string
		}{
			{"financiacion monto zero", "financiacion", with(financiacion, "monto", "0.00"), "monto must be greater than zero"},
			{"financiacion monto three decimals", "financiacion", with(financiacion, "monto", "10.001"), "monto must have at most 2 decimal places"},
			{"financiacion monto 17 digits", "financiacion", with(financiacion, "monto", "12345678901234567"), "monto must have at most 16 digits before the decimal point"},
			{"financiacion precio negative", "financiacion", with(financiacion, "items", item("-1.00")), "items[0].precio must not be negative"},
			{"financiacion precio three decimals", "financiacion", with(financiacion, "items", item("1.005")), "items[0].precio must have at most 2 decimal places"},
			{"autorizacion monto negative", "autorizacion", with(autorizacion, "monto", "-100.00"), "monto must be greater than zero"},
			{"autorizacion monto three decimals", "autorizacion", with(autorizacion, "monto", "100.001"), "monto must have at most 2 decimal places"},
			{"autorizacion cuota_inicial negative", "autorizacion", with(autorizacion, "cuota_inicial", "-5"), "cuota_inicial must not be negative"},
			{"autorizacion cuota_inicial three decimals", "autorizacion", with(autorizacion, "cuota_inicial", "5.555"), "cuota_inicial must have at most 2 decimal places"},
			{"autorizacion cuota_inicial 17 digits", "autorizacion", with(autorizacion, "cuota_inicial", "10000000000000000"), "cuota_inicial must have at most 16 digits before the decimal point"},
			{"autorizacion precio negative", "autorizacion", with(autorizacion, "items", item("-0.01")), "items[0].precio must not be negative"},
			{"autorizacion precio 17 digits", "autorizacion", with(autorizacion, "items", item("10000000000000000.00")), "items[0].precio must have at most 16 digits before the decimal point"},
			{"confirmar monto_facturado zero", "confirmar", with(confirmar, "monto_facturado", "0"), "monto_facturado must be greater than zero"},
			{"confirmar monto_facturado three decimals", "confirmar", with(confirmar, "monto_facturado", "300.001"), "monto_facturado must have at most 2 decimal places"},
			{"confirmar valor_iva negative", "confirmar", with(confirmar, "valor_iva", "-39.13"), "valor_iva must not be negative"},
			{"confirmar valor_iva three decimals", "confirmar", with(confirmar, "valor_iva", "39.125"), "valor_iva must have at most 2 decimal places"},
			{"confirmar valor_comision negative", "confirmar", with(confirmar, "valor_comision", "-1"), "valor_comision must not be negative"},
			{"confirmar valor_comision 17 digits", "confirmar", with(confirmar, "valor_comision", "99999999999999999"), "valor_comision must have at most 16 digits before the decimal point"},
		}
		upstream := map[string]string{"financiacion": "ConsultarAlternativaFinanciacion", "autorizacion": "GrabarAutorizacion", "confirmar": "GrabarConsumo"}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				calls := env.cs.Calls(upstream[tc.endpoint])
				records, err := tg.DB.NewSelect().Model((*consumption.Consumo)(nil)).Count(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				m := expectError(t, env.consumo(tc.endpoint, tc.body), http.StatusBadRequest)
				if errs, _ := m["errors"].([]any); len(errs) != 1 || errs[0] != tc.want {
					t.Fatalf("errors %v, want [%q]", m["errors"], tc.want)
				}
				if n := env.cs.Calls(upstream[tc.endpoint]); n != calls {
					t.Fatalf("%s was called %d times for an invalid request", upstream[tc.endpoint], n-calls)
				}
				after, err := tg.DB.NewSelect().Model((*consumption.Consumo)(nil)).Count(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if after != records {
					t.Fatalf("%d records after an invalid request, want %d", after, records)
				}
				if rec := env.record(id); rec.Estado != before.Estado || !rec.UpdatedAt.Equal(before.UpdatedAt) || rec.NumeroFactura != "" {
					t.Fatalf("the authorization changed: %+v", rec)
				}
			})
		}
		t.Run("zero is a valid cuota_inicial, valor_iva, valor_comision and precio", func(t *testing.T) {
			b := with(autorizacion, "cuota_inicial", "0")
			b["items"] = item("0.00")
			consumoExpect(t, env.consumo("autorizacion", b), http.StatusOK)
			c := with(confirmar, "valor_iva", "0.00")
			c["valor_comision"] = "0"
			consumoExpect(t, env.consumo("confirmar", c), http.StatusOK)
			if got := env.lastField(t, "GrabarConsumo", "nValorIva"); got != "0" && got != "0.00" {
				t.Fatalf("nValorIva sent as %q, want 0", got)
			}
		})
	})
}

// TestConsumoFinanciacionOmitsOptionalFields: an optional field that is not given (absent,
// null, empty or blank) is left out of the SOAP request, neither sent empty nor as xsi:nil;
// one that is given is sent. Nothing is stored by /financiacion, so one engine is enough.
func TestConsumoFinanciacionOmitsOptionalFields(t *testing.T) {
	env := newTestEnv(t, storagetest.SQLite(t))
	base := `"codigo_empresa":"000598","numero_tarjeta":"` + testTarjeta + `","codigo_producto":"001","codigo_tipo_cupo":"001","monto":"100.00"`
	cases := []struct {
		name    string
		body    string
		absent  []string          // elements that must not appear in the SOAP body at all
		present map[string]string // members sent, with their value
		items   []map[string]string
	}{
		{"absent", `{` + base + `}`, []string{"cCodigoTipoOperacion", "iArticuloVm"}, nil, nil},
		{"null", `{` + base + `,"codigo_tipo_operacion":null,"items":null}`, []string{"cCodigoTipoOperacion", "iArticuloVm"}, nil, nil},
		{"empty", `{` + base + `,"codigo_tipo_operacion":"","items":[]}`, []string{"cCodigoTipoOperacion", "iArticuloVm"}, nil, nil},
		{"blank", `{` + base + `,"codigo_tipo_operacion":"   "}`, []string{"cCodigoTipoOperacion", "iArticuloVm"}, nil, nil},
		{"item without its optional fields", `{` + base + `,"items":[{"texto_articulo":"TV","cantidad":1,"precio":"100.00","codigo_articulo":"","codigo_tipo_articulo":" ","caracteristicas":null}]}`,
			[]string{"cCodigoTipoOperacion", "cCodigoArticulo", "cCodigoTipoArticulo", "cCaracteristicas"}, nil,
			[]map[string]string{{"cTextoArticulo": "TV", "nCantidad": "1", "nPrecio": "100.00"}}},
		{"given", `{` + base + `,"codigo_tipo_operacion":"002","items":[{"texto_articulo":"TV","cantidad":2,"precio":"50.00","codigo_articulo":"A1","codigo_tipo_articulo":"T1","caracteristicas":"COLOR:NEGRO"}]}`,
			nil, map[string]string{"cCodigoTipoOperacion": "002"},
			[]map[string]string{{"cTextoArticulo": "TV", "nCantidad": "2", "nPrecio": "50.00", "cCodigoArticulo": "A1", "cCodigoTipoArticulo": "T1", "cCaracteristicas": "COLOR:NEGRO"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			consumoExpect(t, env.do(http.MethodPost, consumoPrefix+"financiacion", tc.body, env.userToken()), http.StatusOK)
			req, ok := env.cs.LastRequest("ConsultarAlternativaFinanciacion")
			if !ok {
				t.Fatal("ConsultarAlternativaFinanciacion never reached the fake")
			}
			for _, name := range tc.absent {
				if bytes.Contains(req.Body, []byte(":"+name)) || bytes.Contains(req.Body, []byte("<"+name)) {
					t.Errorf("%s is in the SOAP request: %s", name, req.Body)
				}
			}
			for name, want := range tc.present {
				if got, ok := req.Field(name); !ok || got != want {
					t.Errorf("%s = %q (present %v), want %q", name, got, ok, want)
				}
			}
			got := req.Lists["iArticuloVm"]
			if len(got) != len(tc.items) {
				t.Fatalf("iArticuloVm %v, want %v", got, tc.items)
			}
			for i, want := range tc.items {
				if fmt.Sprint(got[i]) != fmt.Sprint(want) {
					t.Errorf("iArticuloVm[%d] = %v, want %v", i, got[i], want)
				}
			}
		})
	}
}
