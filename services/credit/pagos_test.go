package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// pagosPath is the specification's unversioned prefix; the versioned one serves the same.
const pagosPath = "/credigestion/pagos/"

func (e *testEnv) pagos(endpoint string, body any, headers ...string) response {
	e.t.Helper()
	return e.do(http.MethodPost, pagosPath+endpoint, body, e.userToken(), headers...)
}

// withDebt gives testTarjeta a debt of 300.00 invoiced today (three installments, none due, so
// the interest is all to come), and returns its pagoContado.
func (e *testEnv) withDebt() decimal.Decimal {
	e.t.Helper()
	id := e.autorizar()
	body := confirmarBody(id, "F-PAGO-"+id)
	body["fecha_factura"] = time.Now().Format(time.DateOnly)
	consumoExpect(e.t.(*testing.T), e.consumo("confirmar", body), 200)
	contado := e.pagoContado()
	if !contado.Equal(decimal.NewFromInt(300)) {
		e.t.Fatalf("pagoContado %s after a consumption of 300.00 invoiced today", contado)
	}
	return contado
}

func (e *testEnv) pagoContado() decimal.Decimal {
	e.t.Helper()
	r := e.pagos("consulta-deuda", map[string]any{"numeroTarjeta": testTarjeta})
	if r.Status != 200 {
		e.t.Fatalf("consulta-deuda = %d %s", r.Status, r.Body)
	}
	var m struct {
		Deuda struct {
			PagoContado json.Number `json:"pagoContado"`
		} `json:"deuda"`
	}
	if err := json.Unmarshal(r.Body, &m); err != nil {
		e.t.Fatal(err)
	}
	return decimal.RequireFromString(m.Deuda.PagoContado.String())
}

func cash(valor string) map[string]any {
	return map[string]any{"codigo": "001", "valor": json.Number(valor)}
}

func cheque(valor string) map[string]any {
	return map[string]any{"codigo": "002", "valor": json.Number(valor), "institucionFinanciera": "BANCO PICHINCHA",
		"numeroDocumento": "000123", "numeroCuenta": "2200112233", "identCuentaCorrentista": "0912345678",
		"nombreCuentaCorrentista": "MARIA PEREZ"}
}

func aplicarBody(valor string, formas ...map[string]any) map[string]any {
	if len(formas) == 0 {
		formas = []map[string]any{cash(valor)}
	}
	return map[string]any{"numeroTarjeta": testTarjeta, "valorPago": json.Number(valor), "fechaPago": "2026-01-20", "formasPago": formas}
}

type pagoAnswer struct {
	ID                int64  `json:"id"`
	NumeroOperacion   *int64 `json:"numeroOperacion"`
	Estado            string `json:"estado"`
	FacturasAfectadas []struct {
		NumeroFactura string      `json:"numeroFactura"`
		Valor         json.Number `json:"valor"`
	} `json:"facturasAfectadas"`
	RubrosAplicados []struct {
		Codigo        string      `json:"codigo"`
		TipoDocumento string      `json:"tipoDocumento"`
		Valor         json.Number `json:"valor"`
	} `json:"rubrosAplicados"`
	RubrosRevertidos []struct {
		Codigo string      `json:"codigo"`
		Valor  json.Number `json:"valor"`
	} `json:"rubrosRevertidos"`
	Cupos []struct {
		Codigo     string      `json:"codigo"`
		Disponible json.Number `json:"disponible"`
	} `json:"cupos"`
	EntregasERP []struct {
		Evento          string  `json:"evento"`
		Estado          string  `json:"estado"`
		Intentos        int     `json:"intentos"`
		NumeroDocumento *string `json:"numeroDocumento"`
	} `json:"entregasErp"`
	ResultadoDesconocido bool `json:"resultadoDesconocido"`
}

func decodePago(t *testing.T, r response, status int) pagoAnswer {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	var a pagoAnswer
	if err := json.Unmarshal(r.Body, &a); err != nil {
		t.Fatalf("%v: %s", err, r.Body)
	}
	return a
}

// TestPagoRules: every rule checked before any upstream call answers the specification's status
// with a message a cashier understands, and changes nothing.
func TestPagoRules(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		env.withDebt() // pagoContado 300.00
		noCheque := cheque("100.00")
		delete(noCheque, "numeroCuenta")
		cashWithBank := cash("100.00")
		cashWithBank["institucionFinanciera"] = "BANCO PICHINCHA"
		cases := []struct {
			name    string
			body    any
			status  int
			message string // in the message (or in errors on a 400)
		}{
			{"formas do not add up", aplicarBody("100.00", cash("60.00"), cash("30.00")), 422, "add up to 90.00, not to valorPago 100.00"},
			{"cheque without its bank data", aplicarBody("100.00", noCheque), 422, "needs all its bank data (missing numeroCuenta)"},
			{"cash with bank data", aplicarBody("100.00", cashWithBank), 422, "must not carry bank data (institucionFinanciera)"},
			{"above pagoContado", aplicarBody("300.01"), 422, "valorPago 300.01 is above the cash amount of the debt (pagoContado 300.00)"},
			{"above pagoContado in cheques", aplicarBody("400.00", cheque("200.00"), cheque("200.00")), 422, "valorPago 400.00 is above"},
			{"valorPago zero", aplicarBody("0", cash("0")), 400, "valorPago must be greater than zero"},
			{"three decimals", aplicarBody("10.005"), 400, "valorPago must have at most 2 decimal places"},
			{"no formasPago", map[string]any{"numeroTarjeta": testTarjeta, "valorPago": 10, "fechaPago": "2026-01-20", "formasPago": []any{}}, 400, "formasPago must list at least one payment method"},
			{"unknown codigo", aplicarBody("10.00", map[string]any{"codigo": "003", "valor": 10}), 400, "formasPago[0].codigo must be 001 (cash) or 002 (cheque)"},
			{"fechaPago not a date", map[string]any{"numeroTarjeta": testTarjeta, "valorPago": 10, "fechaPago": "20/01/2026", "formasPago": []any{cash("10")}}, 400, "fechaPago"},
			{"valorPago as text", `{"numeroTarjeta":"` + testTarjeta + `","valorPago":"diez","fechaPago":"2026-01-20","formasPago":[{"codigo":"001","valor":10}]}`, 400, "valorPago"},
			{"card not found", map[string]any{"numeroTarjeta": creditsystemtest.IdentificacionCardNotFound, "valorPago": 10, "fechaPago": "2026-01-20", "formasPago": []any{cash("10")}}, 404, ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := env.pagos("aplicar", c.body)
				m := expectError(t, r, c.status)
				if !strings.Contains(string(r.Body), c.message) {
					t.Fatalf("answer %s does not say %q", r.Body, c.message)
				}
				if c.status == 422 && m["errors"] != nil {
					t.Fatalf("422 with errors: %s", r.Body)
				}
			})
		}
		if n := env.cs.Calls("GrabarPagoTarjeta"); n != 0 {
			t.Fatalf("GrabarPagoTarjeta called %d times for refused payments", n)
		}
		list := env.do(http.MethodGet, pagosPath+"?numeroTarjeta="+testTarjeta, nil, env.userToken())
		if list.Status != 200 || !strings.Contains(string(list.Body), `"pagos":[]`) {
			t.Fatalf("refused payments left records: %d %s", list.Status, list.Body)
		}
		// Decimal arithmetic: 0.10 + 0.20 is 0.30.
		a := decodePago(t, env.pagos("aplicar", aplicarBody("0.30", cash("0.10"), cash("0.20"))), 200)
		if a.Estado != "APLICADO" || a.NumeroOperacion == nil {
			t.Fatalf("0.10 + 0.20 = 0.30 refused: %+v", a)
		}
	})
}

// TestPagoCompleto: a full cash payment shows the early-payment discount as a negative rubro;
// the ledger reads it by operation number (both prefixes) and by card; its reversal answers
// REVERSADO with the reversed invoices and rubros and restores the debt.
func TestPagoCompleto(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		contado := env.withDebt()
		a := decodePago(t, env.pagos("aplicar", aplicarBody(contado.StringFixed(2), cash("200.00"), cheque(contado.Sub(decimal.NewFromInt(200)).StringFixed(2)))), 200)
		if a.Estado != "APLICADO" || a.NumeroOperacion == nil || len(a.FacturasAfectadas) == 0 || len(a.Cupos) == 0 {
			t.Fatalf("payment %+v", a)
		}
		var discount bool
		for _, r := range a.RubrosAplicados {
			if v := decimal.RequireFromString(r.Valor.String()); v.IsNegative() {
				discount = true
			}
		}
		if !discount {
			t.Fatalf("a full cash payment without a negative (early-payment discount) rubro: %+v", a.RubrosAplicados)
		}
		if got := env.pagoContado(); !got.IsZero() {
			t.Fatalf("pagoContado after paying it all: %s", got)
		}
		n := strconv.FormatInt(*a.NumeroOperacion, 10)
		for _, path := range []string{pagosPath + n, "/api/v1/credigestion/pagos/" + n} {
			got := decodePago(t, env.do(http.MethodGet, path, nil, env.userToken()), 200)
			if got.ID != a.ID || got.Estado != "APLICADO" || len(got.EntregasERP) != 1 || got.EntregasERP[0].Evento != "pago" {
				t.Fatalf("GET %s: %+v", path, got)
			}
		}
		list := env.do(http.MethodGet, pagosPath+"?numeroTarjeta="+testTarjeta+"&per_page=5", nil, env.userToken())
		if list.Status != 200 || !strings.Contains(string(list.Body), `"total_count":1`) {
			t.Fatalf("list: %d %s", list.Status, list.Body)
		}

		rev := decodePago(t, env.pagos("reverso", map[string]any{"numeroOperacion": *a.NumeroOperacion, "motivo": "cheque devuelto"}), 200)
		if rev.Estado != "REVERSADO" || len(rev.FacturasAfectadas) == 0 || len(rev.RubrosRevertidos) == 0 {
			t.Fatalf("reversal %+v", rev)
		}
		if got := env.pagoContado(); !got.Equal(contado) {
			t.Fatalf("pagoContado after the reversal %s, want %s", got, contado)
		}
		m := expectError(t, env.pagos("reverso", map[string]any{"numeroOperacion": *a.NumeroOperacion}), 400)
		if msg, _ := m["message"].(string); !strings.Contains(msg, "REVERSADO") {
			t.Fatalf("second reversal: %v", m["message"])
		}
		expectError(t, env.pagos("reverso", map[string]any{"numeroOperacion": 999999}), 404)
		expectError(t, env.do(http.MethodGet, pagosPath+"999999", nil, env.userToken()), 404)
		// Bearer only, like the consumption module.
		expectError(t, env.do(http.MethodPost, pagosPath+"consulta-deuda", map[string]any{"numeroTarjeta": testTarjeta}, env.serviceKey()), 401)
	})
}

// TestPagoRechazado: an upstream rejection is a 502 with the creditsystem's text; the ledger
// keeps it RECHAZADO and the card is free.
func TestPagoRechazado(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		env.withDebt()
		env.cs.Script("GrabarPagoTarjeta", creditsystemtest.BusinessError(75, "Cartera cerrada por proceso de fin de día"))
		r := env.pagos("aplicar", aplicarBody("50.00"))
		m := expectError(t, r, 502)
		if !strings.Contains(string(r.Body), "Cartera cerrada por proceso de fin de d") || m["estado"] != "RECHAZADO" || m["id"] == nil {
			t.Fatalf("502 %s", r.Body)
		}
		decodePago(t, env.pagos("aplicar", aplicarBody("50.00")), 200)
	})
}

// TestPagoTimeout: a payment that timed out is never sent again; the card's payments get 409
// until a debt query settles it, with the evidence; then a payment is accepted.
func TestPagoTimeout(t *testing.T) {
	for _, c := range []struct {
		name     string
		reaction creditsystemtest.Reaction
		estado   string
	}{
		{"applied late", creditsystemtest.LateSuccess(), "APLICADO"},
		{"never applied", creditsystemtest.Hang(), "NO_APLICADO"},
	} {
		t.Run(c.name, func(t *testing.T) {
			storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
				env := newTestEnv(t, tg, shortTimeout)
				env.withDebt()
				env.cs.Script("GrabarPagoTarjeta", c.reaction)
				r := env.pagos("aplicar", aplicarBody("100.00"))
				m := expectError(t, r, 504)
				if m["id"] == nil || m["estado"] != "DESCONOCIDO" || !strings.Contains(m["message"].(string), "GrabarPagoTarjeta") {
					t.Fatalf("504 %s", r.Body)
				}
				if got := env.gauge("credit_pagos_outcome_unknown"); got != "1" {
					t.Fatalf("credit_pagos_outcome_unknown = %s after the timeout, want 1", got)
				}
				m = expectError(t, env.pagos("aplicar", aplicarBody("100.00")), 409)
				if msg := m["message"].(string); !strings.Contains(msg, "query the debt") {
					t.Fatalf("409 %q must say to query the debt first", msg)
				}
				if n := env.cs.Calls("GrabarPagoTarjeta"); n != 1 {
					t.Fatalf("GrabarPagoTarjeta reached the fake %d times, want 1", n)
				}
				d := env.pagos("consulta-deuda", map[string]any{"numeroTarjeta": testTarjeta})
				if d.Status != 200 || !strings.Contains(string(d.Body), `"estado":"`+c.estado+`"`) || !strings.Contains(string(d.Body), `"pagoContadoAntes":300.00`) {
					t.Fatalf("debt query did not settle the payment as %s: %s", c.estado, d.Body)
				}
				if got := env.gauge("credit_pagos_outcome_unknown"); got != "0" {
					t.Fatalf("credit_pagos_outcome_unknown = %s after the debt query, want 0", got)
				}
				decodePago(t, env.pagos("aplicar", aplicarBody("10.00")), 200)
				if n := env.cs.Calls("GrabarPagoTarjeta"); n != 2 {
					t.Fatalf("GrabarPagoTarjeta reached the fake %d times, want 2", n)
				}
			})
		})
	}
}

// TestPagoIdempotency: 20 concurrent aplicar with one Idempotency-Key make one
// GrabarPagoTarjeta; the others are replays or 409. 20 with different keys never pay more than
// pagoContado in total.
func TestPagoIdempotency(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		contado := env.withDebt()
		const n = 20
		run := func(key func(i int) string) []response {
			out := make([]response, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { out[i] = env.pagos("aplicar", aplicarBody("100.00"), "Idempotency-Key", key(i)) })
			}
			wg.Wait()
			return out
		}
		same := run(func(int) string { return "pago-same-key" })
		var ok, replays int
		for _, r := range same {
			switch {
			case r.Status == 200 && r.Header.Get("Idempotent-Replayed") == "true":
				replays++
			case r.Status == 200:
				ok++
			case r.Status == 409:
			default:
				t.Fatalf("one key: %d %s", r.Status, r.Body)
			}
		}
		if ok != 1 || env.cs.Calls("GrabarPagoTarjeta") != 1 {
			t.Fatalf("one key: %d fresh answers, %d replays, %d GrabarPagoTarjeta; want 1 payment", ok, replays, env.cs.Calls("GrabarPagoTarjeta"))
		}

		keys := run(func(i int) string { return "pago-key-" + strconv.Itoa(i) })
		paid, payments := decimal.NewFromInt(100), 1
		for _, r := range keys {
			switch r.Status {
			case 200:
				paid, payments = paid.Add(decimal.NewFromInt(100)), payments+1
			case 409, 422:
			default:
				t.Fatalf("many keys: %d %s", r.Status, r.Body)
			}
		}
		if paid.GreaterThan(contado) {
			t.Fatalf("paid %s in total, above pagoContado %s", paid, contado)
		}
		if calls := env.cs.Calls("GrabarPagoTarjeta"); calls != payments {
			t.Fatalf("%d GrabarPagoTarjeta for %d accepted payments", calls, payments)
		}
	})
}

// TestPagoHandOver: each applied or reversed payment reaches the ERP exactly once, also when
// the first attempt fails; the ledger shows the document.
func TestPagoHandOver(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		env.startJobs()
		env.withDebt()
		env.erp.Script(erp.OpHandOverPayment, erptest.Raw(http.StatusInternalServerError, `{"error_api":true,"mensaje":"ERP caído"}`))
		a := decodePago(t, env.pagos("aplicar", aplicarBody("100.00")), 200)
		n := strconv.FormatInt(*a.NumeroOperacion, 10)
		delivered := func(evento string) pagoAnswer {
			deadline := time.Now().Add(20 * time.Second)
			for {
				got := decodePago(t, env.do(http.MethodGet, pagosPath+n, nil, env.userToken()), 200)
				for _, e := range got.EntregasERP {
					if e.Evento == evento && e.Estado == "delivered" {
						return got
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("hand-over %s not delivered: %+v", evento, got.EntregasERP)
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
		got := delivered("pago")
		if e := got.EntregasERP[0]; e.Intentos != 2 || e.NumeroDocumento == nil || *e.NumeroDocumento == "" {
			t.Fatalf("hand-over after one failure: %+v", e)
		}
		decodePago(t, env.pagos("reverso", map[string]any{"numeroOperacion": *a.NumeroOperacion}), 200)
		delivered("reverso")
		time.Sleep(1500 * time.Millisecond) // a duplicate job would have run by now
		if calls := env.erp.Calls(erp.OpHandOverPayment); calls != 3 {
			t.Fatalf("%d hand-over calls reached the ERP, want 3 (a failed one, the payment, the reversal)", calls)
		}
		if h := env.erp.HandOvers(); len(h) != 2 {
			t.Fatalf("ERP holds %d hand-overs, want 2: %+v", len(h), h)
		}
	})
}

// TestPagoWritesThatFail: when the write that records a payment or reversal fails after the
// creditsystem applied it, the answer carries the ledger id and the operation number, a retry
// with the same Idempotency-Key replays it without a second call, and the card stays held
// (until a debt query settles it).
func TestPagoWritesThatFail(t *testing.T) {
	cases := []struct {
		name, endpoint, upstream, fault string
		body                            func(n int64) any
	}{
		{"aplicar", "aplicar", "GrabarPagoTarjeta", `(?s)UPDATE "pagos".*'APLICADO'`, func(int64) any { return aplicarBody("100.00") }},
		{"reverso", "reverso", "GrabarReversoPagoTarjeta", `(?s)UPDATE "pagos".*'REVERSADO'`, func(n int64) any { return map[string]any{"numeroOperacion": n} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
				faults := &storagetest.Faults{}
				env := newTestEnv(t, tg, withFaults(faults))
				env.withDebt()
				var n int64
				if tc.endpoint == "reverso" {
					n = *decodePago(t, env.pagos("aplicar", aplicarBody("50.00")), 200).NumeroOperacion
				}
				post := func() response { return env.pagos(tc.endpoint, tc.body(n), "Idempotency-Key", "fault-"+tc.name) }
				faults.Fail(tc.fault, -1)
				first := post()
				faults.Clear()
				if faults.Hits() == 0 {
					t.Fatal("the fault never fired")
				}
				m := expectError(t, first, http.StatusInternalServerError)
				if m["id"] == nil || m["numeroOperacion"] == nil || m["operation"] != tc.upstream || !strings.Contains(m["message"].(string), "query the debt") {
					t.Fatalf("answer after the creditsystem acted: %s; want the ids and what to do", first.Body)
				}
				again := post()
				if again.Status != first.Status || string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
					t.Fatalf("retry with the same key: %d %s", again.Status, again.Body)
				}
				if calls := env.cs.Calls(tc.upstream); calls != 1 {
					t.Fatalf("%s reached the creditsystem %d times, want 1", tc.upstream, calls)
				}
				expectError(t, env.pagos("aplicar", aplicarBody("10.00")), http.StatusConflict)
			})
		})
	}
}

// TestPagoConcurrentReversals: concurrent reversals of one payment make one upstream call.
func TestPagoConcurrentReversals(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		env.withDebt()
		n := *decodePago(t, env.pagos("aplicar", aplicarBody("100.00")), 200).NumeroOperacion
		const parallel = 20
		status := make([]int, parallel)
		var wg sync.WaitGroup
		for i := range parallel {
			wg.Go(func() { status[i] = env.pagos("reverso", map[string]any{"numeroOperacion": n}).Status })
		}
		wg.Wait()
		ok := 0
		for _, s := range status {
			switch s {
			case 200:
				ok++
			case 400, 409:
			default:
				t.Fatalf("statuses %v", status)
			}
		}
		if ok != 1 || env.cs.Calls("GrabarReversoPagoTarjeta") != 1 {
			t.Fatalf("%d reversals answered 200, %d reached the creditsystem; want 1 and 1 (%v)", ok, env.cs.Calls("GrabarReversoPagoTarjeta"), status)
		}
	})
}

// TestPagoWriteFailsBeforeTheCall: when the write that precedes GrabarPagoTarjeta fails, nothing
// is sent and nothing stays in the ledger.
func TestPagoWriteFailsBeforeTheCall(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		faults := &storagetest.Faults{}
		env := newTestEnv(t, tg, withFaults(faults))
		env.withDebt()
		faults.Fail(`(?s)UPDATE "pagos".*'PENDIENTE'`, -1)
		r := env.pagos("aplicar", aplicarBody("100.00"))
		faults.Clear()
		if faults.Hits() == 0 {
			t.Fatal("the fault never fired")
		}
		if r.Status < 500 || strings.Contains(string(r.Body), `"id"`) {
			t.Fatalf("answer %d %s, want a 5xx without a record", r.Status, r.Body)
		}
		if n := env.cs.Calls("GrabarPagoTarjeta"); n != 0 {
			t.Fatalf("GrabarPagoTarjeta reached the creditsystem %d times", n)
		}
		list := env.do(http.MethodGet, pagosPath+"?numeroTarjeta="+testTarjeta, nil, env.userToken())
		if !strings.Contains(string(list.Body), `"total_count":0`) {
			t.Fatalf("a payment never sent stayed in the ledger: %s", list.Body)
		}
		decodePago(t, env.pagos("aplicar", aplicarBody("100.00")), 200)
	})
}

// gauge reads one unlabelled metric of GET /metrics.
func (e *testEnv) gauge(name string) string {
	e.t.Helper()
	r := e.do(http.MethodGet, "/metrics", nil, "")
	for line := range strings.Lines(string(r.Body)) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	e.t.Fatalf("%s missing from /metrics", name)
	return ""
}
