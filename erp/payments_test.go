package erp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/erp/erptest/fixtures"
	"github.com/platform/integrations/upstream"
)

func money(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// samplePayment is a payment of 150.50 that settles two invoices (155.50) with an
// early-payment discount of 5.00, shown as a rubro with a negative valor.
func samplePayment() erp.PaymentHandOver {
	return erp.PaymentHandOver{
		Event:           erp.PaymentApplied,
		NumeroOperacion: 100234,
		NumeroTarjeta:   "4000123412341234",
		ValorPago:       money("150.5"),
		FechaPago:       "2024-03-15",
		Facturas: []erp.PaymentInvoice{
			{NumeroFactura: "001-001-000012345", Valor: money("100.25")},
			{NumeroFactura: "001-001-000012346", Valor: money("55.25")},
		},
		Rubros: []erp.PaymentRubro{
			{Codigo: "CAP", TipoDocumento: "FAC", Valor: money("140.00")},
			{Codigo: "INT", TipoDocumento: "FAC", Valor: money("15.5")},
			{Codigo: "DPP", TipoDocumento: "NC", Valor: money("-5")},
		},
	}
}

// sampleReversal reverses samplePayment.
func sampleReversal() erp.PaymentHandOver {
	h := samplePayment()
	h.Event = erp.PaymentReversed
	h.Motivo = "pago registrado por error"
	return h
}

func TestHandOverPaymentRequestGolden(t *testing.T) {
	cases := []struct {
		name    string
		h       erp.PaymentHandOver
		wantKey string
		wantDoc string
	}{
		{"handover_payment_request.json", samplePayment(), "pago-100234", "RC-100234"},
		{"handover_reversal_request.json", sampleReversal(), "reverso-100234", "NC-100234"},
		{"handover_minimal_request.json", erp.PaymentHandOver{Event: erp.PaymentApplied, NumeroOperacion: 7,
			NumeroTarjeta: "4000", ValorPago: money("20"), FechaPago: "2024-02-29"}, "pago-7", "RC-7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := erptest.NewServer()
			t.Cleanup(srv.Close)
			res, err := newClient(t, srv, 2*time.Second).HandOverPayment(t.Context(), tc.h)
			if err != nil {
				t.Fatal(err)
			}
			if res.NumeroDocumento != tc.wantDoc || res.Duplicate {
				t.Errorf("result = %+v, want %s, not a duplicate", res, tc.wantDoc)
			}
			reqs := srv.Requests(erp.OpHandOverPayment)
			if len(reqs) != 1 {
				t.Fatalf("fake saw %d hand-overs, want 1", len(reqs))
			}
			if got := reqs[0].Header.Get("Idempotency-Key"); got != tc.wantKey {
				t.Errorf("Idempotency-Key = %q, want %q", got, tc.wantKey)
			}
			if ct := reqs[0].Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			golden(t, tc.name, reqs[0].Body)
		})
	}
}

// TestHandOverPaymentMoney: amounts are JSON numbers with exactly 2 decimals, written from the
// decimal (no float64 rounding, no exponent), negative rubros included.
func TestHandOverPaymentMoney(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"one decimal", "150.5", "150.50"},
		{"integer", "100", "100.00"},
		{"trailing zero beyond 2 decimals", "1.500", "1.50"},
		{"cents", "0.01", "0.01"},
		{"exponent in the input", "1e2", "100.00"},
		{"beyond float64 precision", "12345678901234567.89", "12345678901234567.89"},
		{"negative", "-5", "-5.00"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := erptest.NewServer()
			t.Cleanup(srv.Close)
			h := samplePayment()
			h.Rubros = []erp.PaymentRubro{{Codigo: "DPP", TipoDocumento: "NC", Valor: money(tc.in)}}
			h.Facturas = []erp.PaymentInvoice{{NumeroFactura: "F-1", Valor: money(tc.in).Abs()}}
			h.ValorPago = money(tc.in).Abs()
			if _, err := newClient(t, srv, 2*time.Second).HandOverPayment(t.Context(), h); err != nil {
				t.Fatal(err)
			}
			var sent struct {
				ValorPago json.RawMessage `json:"valor_pago"`
				Facturas  []struct {
					Valor json.RawMessage `json:"valor"`
				} `json:"facturas"`
				Rubros []struct {
					Valor json.RawMessage `json:"valor"`
				} `json:"rubros"`
			}
			if err := json.Unmarshal(srv.Requests(erp.OpHandOverPayment)[0].Body, &sent); err != nil {
				t.Fatal(err)
			}
			abs := strings.TrimPrefix(tc.want, "-")
			if string(sent.ValorPago) != abs || string(sent.Facturas[0].Valor) != abs || string(sent.Rubros[0].Valor) != tc.want {
				t.Errorf("sent valor_pago %s, factura %s, rubro %s; want %s, %s, %s",
					sent.ValorPago, sent.Facturas[0].Valor, sent.Rubros[0].Valor, abs, abs, tc.want)
			}
		})
	}
}

// TestHandOverPaymentInvalidInput: a hand-over that cannot be valid is refused with
// ErrInvalidRequest naming every problem, and nothing reaches the ERP.
func TestHandOverPaymentInvalidInput(t *testing.T) {
	with := func(f func(*erp.PaymentHandOver)) erp.PaymentHandOver { h := samplePayment(); f(&h); return h }
	cases := []struct {
		name string
		h    erp.PaymentHandOver
		want string
	}{
		{"no event", with(func(h *erp.PaymentHandOver) { h.Event = "" }), `evento must be "pago" or "reverso", got ""`},
		{"event in capitals", with(func(h *erp.PaymentHandOver) { h.Event = "PAGO" }), `got "PAGO"`},
		{"numero_operacion zero", with(func(h *erp.PaymentHandOver) { h.NumeroOperacion = 0 }), "numero_operacion must be > 0, got 0"},
		{"numero_operacion negative", with(func(h *erp.PaymentHandOver) { h.NumeroOperacion = -1 }), "numero_operacion must be > 0, got -1"},
		{"blank numero_tarjeta", with(func(h *erp.PaymentHandOver) { h.NumeroTarjeta = " " }), "numero_tarjeta required"},
		{"valor_pago zero", with(func(h *erp.PaymentHandOver) { h.ValorPago = decimal.Zero }), "valor_pago must be > 0, got 0"},
		{"valor_pago negative", with(func(h *erp.PaymentHandOver) { h.ValorPago = money("-1") }), "valor_pago must be > 0, got -1"},
		{"valor_pago with 3 decimals", with(func(h *erp.PaymentHandOver) { h.ValorPago = money("150.505") }), "valor_pago has more than 2 decimals: 150.505"},
		{"factura valor with 3 decimals", with(func(h *erp.PaymentHandOver) { h.Facturas[1].Valor = money("0.001") }), "facturas[1].valor has more than 2 decimals"},
		{"rubro valor with 3 decimals", with(func(h *erp.PaymentHandOver) { h.Rubros[2].Valor = money("-4.999") }), "rubros[2].valor has more than 2 decimals"},
		{"factura without numero", with(func(h *erp.PaymentHandOver) { h.Facturas[0].NumeroFactura = "" }), "facturas[0].numero_factura required"},
		{"rubro without codigo", with(func(h *erp.PaymentHandOver) { h.Rubros[1].Codigo = "\t" }), "rubros[1].codigo required"},
		{"no fecha_pago", with(func(h *erp.PaymentHandOver) { h.FechaPago = "" }), `fecha_pago must be a yyyy-mm-dd date, got ""`},
		{"fecha_pago not a day", with(func(h *erp.PaymentHandOver) { h.FechaPago = "2023-02-29" }), "fecha_pago must be a yyyy-mm-dd date"},
		{"fecha_pago dd/mm/yyyy", with(func(h *erp.PaymentHandOver) { h.FechaPago = "15/03/2024" }), "fecha_pago must be a yyyy-mm-dd date"},
		{"fecha_pago without zero padding", with(func(h *erp.PaymentHandOver) { h.FechaPago = "2024-3-15" }), "fecha_pago must be a yyyy-mm-dd date"},
		{"fecha_pago with a time", with(func(h *erp.PaymentHandOver) { h.FechaPago = "2024-03-15T10:00:00Z" }), "fecha_pago must be a yyyy-mm-dd date"},
		{"every problem at once", erp.PaymentHandOver{Facturas: []erp.PaymentInvoice{{}}},
			`evento must be "pago" or "reverso", got ""; numero_operacion must be > 0, got 0; numero_tarjeta required; ` +
				`valor_pago must be > 0, got 0; fecha_pago must be a yyyy-mm-dd date, got ""; facturas[0].numero_factura required`},
	}
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	c := newClient(t, srv, 2*time.Second)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.HandOverPayment(t.Context(), tc.h)
			if res != nil || !errors.Is(err, erp.ErrInvalidRequest) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("HandOverPayment = %+v, %v; want ErrInvalidRequest containing %q", res, err, tc.want)
			}
			if erp.IsTransport(err) || erp.IsTimeout(err) || upstream.KindOf(err) != 0 {
				t.Errorf("%v looks like a failed call", err)
			}
			if !strings.HasPrefix(err.Error(), "erp: HandOverPayment: invalid request: ") {
				t.Errorf("error does not name the operation: %v", err)
			}
		})
	}
	if n := srv.Calls(erp.OpHandOverPayment); n != 0 {
		t.Errorf("bad input reached the ERP %d times", n)
	}
}

// TestHandOverPaymentIsIdempotent: the ERP issues one document per (event, operation number); a
// repeat gets the same document with Duplicate true, the answer kept as received.
func TestHandOverPaymentIsIdempotent(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	c := newClient(t, srv, 2*time.Second)
	steps := []struct {
		name    string
		h       erp.PaymentHandOver
		wantDoc string
		wantDup bool
		fixture string // the answer as received, when set
	}{
		{"payment", samplePayment(), "RC-100234", false, fixtures.FixtureHandOverReceipt},
		{"payment again", samplePayment(), "RC-100234", true, fixtures.FixtureHandOverDuplicate},
		{"its reversal", sampleReversal(), "NC-100234", false, fixtures.FixtureHandOverCreditNote},
		{"the reversal again, without motivo", func() erp.PaymentHandOver { h := sampleReversal(); h.Motivo = ""; return h }(), "NC-100234", true, ""},
		{"another payment", func() erp.PaymentHandOver { h := samplePayment(); h.NumeroOperacion = 100235; return h }(), "RC-100235", false, ""},
	}
	for _, st := range steps {
		res, err := c.HandOverPayment(t.Context(), st.h)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if res.NumeroDocumento != st.wantDoc || res.Duplicate != st.wantDup {
			t.Errorf("%s: %s duplicate %v, want %s duplicate %v", st.name, res.NumeroDocumento, res.Duplicate, st.wantDoc, st.wantDup)
		}
		if st.fixture != "" && !bytes.Equal(res.Raw, fixtures.Fixture(st.fixture)) {
			t.Errorf("%s: Raw = %s, want %s", st.name, res.Raw, fixtures.Fixture(st.fixture))
		}
	}
	got := srv.HandOvers()
	if len(got) != 3 || got[0].Event != erp.PaymentApplied || got[1].Event != erp.PaymentReversed || got[2].NumeroOperacion != 100235 {
		t.Fatalf("HandOvers = %+v, want the payment, its reversal and the other payment", got)
	}
	if got[1].Motivo != "pago registrado por error" || !got[0].ValorPago.Equal(money("150.50")) || !got[0].Rubros[2].Valor.Equal(money("-5")) {
		t.Errorf("the ERP holds %+v", got[:2])
	}
	if n := srv.Calls(erp.OpHandOverPayment); n != len(steps) {
		t.Errorf("Calls = %d, want %d", n, len(steps))
	}
}

// TestHandOverLateSuccessThenRetry is the background job's story: the ERP issued the receipt but
// the answer never came (outcome unknown); the retry gets the same receipt as a duplicate.
func TestHandOverLateSuccessThenRetry(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	srv.Script(erp.OpHandOverPayment, erptest.LateSuccess())
	c := newClient(t, srv, testTimeout)
	_, err := c.HandOverPayment(t.Context(), samplePayment())
	checkErr(t, erp.OpHandOverPayment, err, wantErr{timeout: true, transport: true})
	res, err := c.HandOverPayment(t.Context(), samplePayment())
	if err != nil || res.NumeroDocumento != "RC-100234" || !res.Duplicate {
		t.Fatalf("retry = %+v, %v; want RC-100234 as a duplicate", res, err)
	}
	if n := len(srv.HandOvers()); n != 1 {
		t.Errorf("the ERP holds %d hand-overs, want 1", n)
	}
}

// TestHandOverAnswers: what HandOverPayment reads from a 2xx answer a real ERP might send.
func TestHandOverAnswers(t *testing.T) {
	cases := []struct {
		name    string
		body    string
		wantDoc string
		wantDup bool
	}{
		{"recorded receipt", string(fixtures.Fixture(fixtures.FixtureHandOverReceipt)), "RC-100234", false},
		{"recorded duplicate", string(fixtures.Fixture(fixtures.FixtureHandOverDuplicate)), "RC-100234", true},
		{"duplicado as 1, error_api as 0", `{"error_api":0,"numero_documento":"RC-9","duplicado":1}`, "RC-9", true},
		{"duplicado null", `{"error_api":false,"numero_documento":"NC-9","duplicado":null}`, "NC-9", false},
		{"duplicado missing, mensaje null", `{"error_api":false,"mensaje":null,"numero_documento":"NC-9"}`, "NC-9", false},
		{"unknown members ignored", `{"error_api":false,"numero_documento":"RC-9","serie":"001-002"}`, "RC-9", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := mockClient(t, mockERP(t, tc.body)).HandOverPayment(t.Context(), samplePayment())
			if err != nil {
				t.Fatal(err)
			}
			if res.NumeroDocumento != tc.wantDoc || res.Duplicate != tc.wantDup || string(res.Raw) != tc.body {
				t.Errorf("result = %+v (Raw %s), want %s duplicate %v and the answer as received", res, res.Raw, tc.wantDoc, tc.wantDup)
			}
		})
	}
}

// TestHandOverPaymentSendsTheAPIKey: the configured header authenticates the hand-over too; a
// refusal issues nothing.
func TestHandOverPaymentSendsTheAPIKey(t *testing.T) {
	const header, key = "Authorization", "Bearer k-3f9a"
	srv := erptest.NewServer(erptest.WithAPIKey(header, key))
	t.Cleanup(srv.Close)
	cfg := srv.Config(2 * time.Second)
	cfg.APIKey, cfg.APIKeyHeader = key, header
	c, err := erp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.HandOverPayment(t.Context(), samplePayment()); err != nil {
		t.Fatalf("with the key: %v", err)
	}
	if got := srv.Requests(erp.OpHandOverPayment)[0].Header.Get(header); got != key {
		t.Errorf("%s = %q, want the key", header, got)
	}

	h := samplePayment()
	h.NumeroOperacion = 100235
	_, err = newClient(t, srv, 2*time.Second).HandOverPayment(t.Context(), h)
	checkErr(t, erp.OpHandOverPayment, err, wantErr{apiStatus: http.StatusUnauthorized, apiMessage: "credenciales invalidas"})
	if n := len(srv.HandOvers()); n != 1 {
		t.Errorf("the ERP holds %d hand-overs, want 1 (the refused one issued nothing)", n)
	}
}
