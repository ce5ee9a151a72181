package creditsystemtest_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
)

var update = flag.Bool("update", false, "rewrite testdata/fixtures from the fake's answers")

var fixedNow = time.Date(2025, 3, 10, 15, 4, 5, 0, time.UTC)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func decimalOf(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// recorder keeps the first answer the fake gave to each operation.
type recorder struct {
	mu      sync.Mutex
	answers map[string]answer
	next    http.RoundTripper
}

type answer struct {
	status int
	body   []byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	op, _ := creditsystem.OperationFromContext(req.Context())
	res, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	if _, seen := r.answers[op]; !seen {
		r.answers[op] = answer{res.StatusCode, body}
	}
	r.mu.Unlock()
	return res, nil
}

// record runs a scenario against a fresh fake and returns the answers per operation.
func record(t *testing.T, s creditsystemtest.Scenario) map[string]answer {
	t.Helper()
	srv := creditsystemtest.NewServer(creditsystemtest.WithClock(func() time.Time { return fixedNow }))
	defer srv.Close()
	rec := &recorder{answers: map[string]answer{}, next: srv.Client().Transport}
	c, err := creditsystem.New(srv.Config(), creditsystem.WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	switch s {
	case creditsystemtest.ScenarioSuccess:
		successFlow(t, ctx, c)
	default:
		for _, op := range creditsystemtest.Operations() {
			switch s {
			case creditsystemtest.ScenarioCardNotFound:
				srv.Script(op, creditsystemtest.BusinessError(2, "Cliente no tiene tarjeta"))
			case creditsystemtest.ScenarioBusinessError:
				srv.Script(op, creditsystemtest.BusinessError(99, "Transacción rechazada por el sistema de crédito"))
			case creditsystemtest.ScenarioFault:
				srv.Script(op, creditsystemtest.Fault("a:InternalServiceFault", "Error interno del servicio"))
			}
		}
		callEach(ctx, c)
	}
	return rec.answers
}

const (
	cliente = "0912345678"
	invoice = "001-002-000000123"
)

func successFlow(t *testing.T, ctx context.Context, c *creditsystem.Client) {
	t.Helper()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.ConsultarTarjeta(ctx, creditsystem.ConsultarTarjetaRequest{Identificacion: cliente}))
	must(c.ConsultarAlternativaFinanciacion(ctx, creditsystem.ConsultarAlternativaFinanciacionRequest{NumeroTarjeta: cliente, CodigoProducto: "001", CodigoTipoCupo: "001", Monto: d("1200.00")}))
	a, err := c.GrabarAutorizacion(ctx, creditsystem.GrabarAutorizacionRequest{Identificacion: cliente, CodigoProducto: "001", Plazo: 6, Monto: d("1200.00"), PuntoVenta: "PV-QUITO-01"})
	must(a, err)
	must(c.GrabarConsumo(ctx, creditsystem.GrabarConsumoRequest{NumeroAutorizacion: *a.NumeroAutorizacion, NumeroFactura: invoice, MontoFacturado: d("1200.00"),
		FechaFactura: creditsystem.NewDate(2025, 3, 10), CodigoProducto: "001", Identificacion: cliente, Plazo: 6, Monto: d("1200.00")}))
	must(c.ConsultarDeudaTarjeta(ctx, creditsystem.ConsultarDeudaTarjetaRequest{NumeroTarjeta: cliente}))
	p, err := c.GrabarPagoTarjeta(ctx, creditsystem.GrabarPagoTarjetaRequest{NumeroTarjeta: cliente, ValorPago: d("300.00"), FechaPago: creditsystem.NewDate(2025, 3, 10),
		FormasPago: []creditsystem.FormaPago{{Codigo: creditsystem.FormaPagoEfectivo, Valor: d("300.00")}}})
	must(p, err)
	must(c.GrabarReversoPagoTarjeta(ctx, creditsystem.GrabarReversoPagoTarjetaRequest{NumeroOperacion: *p.NumeroOperacion, MotivoReverso: "PAGO DUPLICADO"}))
	a2, err := c.GrabarAutorizacion(ctx, creditsystem.GrabarAutorizacionRequest{Identificacion: cliente, CodigoProducto: "001", Plazo: 3, Monto: d("200.00"), PuntoVenta: "PV-QUITO-01"})
	must(a2, err)
	must(c.GrabarReversoAutorizacion(ctx, creditsystem.GrabarReversoAutorizacionRequest{NumeroAutorizacion: *a2.NumeroAutorizacion, Identificacion: cliente}))
	must(c.GrabarReversoConsumo(ctx, creditsystem.GrabarReversoConsumoRequest{NumeroReferencia: invoice, Identificacion: cliente}))
}

// callEach calls every operation once; the answers are scripted, so the arguments only
// need to be plausible.
func callEach(ctx context.Context, c *creditsystem.Client) {
	c.ConsultarTarjeta(ctx, creditsystem.ConsultarTarjetaRequest{Identificacion: cliente})
	c.ConsultarAlternativaFinanciacion(ctx, creditsystem.ConsultarAlternativaFinanciacionRequest{NumeroTarjeta: cliente, Monto: d("1200.00")})
	c.GrabarAutorizacion(ctx, creditsystem.GrabarAutorizacionRequest{Identificacion: cliente, Plazo: 6, Monto: d("1200.00")})
	c.GrabarConsumo(ctx, creditsystem.GrabarConsumoRequest{NumeroAutorizacion: "AUT0000001", NumeroFactura: invoice, MontoFacturado: d("1200.00"),
		FechaFactura: creditsystem.NewDate(2025, 3, 10), Identificacion: cliente})
	c.GrabarReversoAutorizacion(ctx, creditsystem.GrabarReversoAutorizacionRequest{NumeroAutorizacion: "AUT0000001", Identificacion: cliente})
	c.GrabarReversoConsumo(ctx, creditsystem.GrabarReversoConsumoRequest{NumeroReferencia: invoice, Identificacion: cliente})
	c.ConsultarDeudaTarjeta(ctx, creditsystem.ConsultarDeudaTarjetaRequest{NumeroTarjeta: cliente})
	c.GrabarPagoTarjeta(ctx, pagoReq(cliente, "1.00"))
	c.GrabarReversoPagoTarjeta(ctx, creditsystem.GrabarReversoPagoTarjetaRequest{NumeroOperacion: 100001})
}

// The httpmock fixtures are the fake's own answers: -update rewrites them, otherwise any
// difference fails.
func TestFixturesAreTheFakesAnswers(t *testing.T) {
	for _, s := range creditsystemtest.Scenarios() {
		t.Run(string(s), func(t *testing.T) {
			answers := record(t, s)
			if len(answers) != len(creditsystemtest.Operations()) {
				t.Fatalf("recorded %d operations, want %d", len(answers), len(creditsystemtest.Operations()))
			}
			dir := filepath.Join("testdata", "fixtures", string(s))
			if *update {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for op, a := range answers {
				path := filepath.Join(dir, op+"."+strconv.Itoa(a.status)+".xml")
				if *update {
					if err := os.WriteFile(path, a.body, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Errorf("%v (go test -update regenerates the fixtures)", err)
					continue
				}
				if !bytes.Equal(a.body, want) {
					t.Errorf("%s: the fake's answer changed; review and run go test -update\n got: %s\nwant: %s", path, a.body, want)
				}
			}
		})
	}
}

func mockClient(t *testing.T, cfg creditsystem.Config, s creditsystemtest.Scenario) (*creditsystem.Client, *httpmock.MockTransport) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	if err := creditsystemtest.RegisterResponders(mt, cfg, s); err != nil {
		t.Fatal(err)
	}
	c, err := creditsystem.New(cfg, creditsystem.WithHTTPClient(&http.Client{Transport: mt}))
	if err != nil {
		t.Fatal(err)
	}
	return c, mt
}

func mockConfig() creditsystem.Config {
	cfg := creditsystemtest.DevConfig()
	cfg.CarteraURL = "https://creditsystem.example/Cartera/ServicioCar.svc"
	cfg.CentralURL = "https://creditsystem.example/Central/ServicioCentral.svc"
	return cfg
}

func TestRegisterResponders(t *testing.T) {
	t.Run("success", func(t *testing.T) {
		c, mt := mockClient(t, mockConfig(), creditsystemtest.ScenarioSuccess)
		res, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: cliente})
		if err != nil || *res.Cliente != "CLIENTE "+cliente || !res.Cupos[0].CupoDisponible.Equal(d("5000")) {
			t.Fatalf("ConsultarTarjeta = %+v, %v", res, err)
		}
		a, err := c.GrabarAutorizacion(t.Context(), creditsystem.GrabarAutorizacionRequest{Identificacion: cliente, Monto: d("1200.00"), Plazo: 6})
		if err != nil || *a.NumeroAutorizacion != "AUT0000001" || !a.CodigoSeguridadEnviado {
			t.Fatalf("GrabarAutorizacion = %+v, %v", a, err)
		}
		f, err := c.ConsultarAlternativaFinanciacion(t.Context(), creditsystem.ConsultarAlternativaFinanciacionRequest{NumeroTarjeta: cliente, Monto: d("1200.00")})
		if err != nil || len(f.Alternativas) == 0 {
			t.Fatalf("ConsultarAlternativaFinanciacion = %+v, %v", f, err)
		}
		info := mt.GetCallCountInfo()
		if info["POST "+mockConfig().CarteraURL] != 2 || info["POST "+mockConfig().CentralURL] != 1 {
			t.Errorf("calls = %v", info)
		}
	})
	t.Run("every scenario answers every operation", func(t *testing.T) {
		for _, s := range creditsystemtest.Scenarios() {
			c, mt := mockClient(t, mockConfig(), s)
			callEach(t.Context(), c)
			if n := mt.GetTotalCallCount(); n != len(creditsystemtest.Operations()) {
				t.Errorf("%s: %d calls answered", s, n)
			}
		}
	})
	t.Run("card not found", func(t *testing.T) {
		c, _ := mockClient(t, mockConfig(), creditsystemtest.ScenarioCardNotFound)
		_, err := c.GrabarPagoTarjeta(t.Context(), pagoReq(cliente, "1.00"))
		if !errors.Is(err, creditsystem.ErrCardNotFound) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("business error", func(t *testing.T) {
		c, _ := mockClient(t, mockConfig(), creditsystemtest.ScenarioBusinessError)
		_, err := c.ConsultarDeudaTarjeta(t.Context(), creditsystem.ConsultarDeudaTarjetaRequest{NumeroTarjeta: cliente})
		var be *creditsystem.Error
		if !errors.As(err, &be) || be.Code != 99 {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("fault", func(t *testing.T) {
		c, _ := mockClient(t, mockConfig(), creditsystemtest.ScenarioFault)
		_, err := c.GrabarConsumo(t.Context(), consumoReq("AUT0000001", cliente, invoice, "10.00", ""))
		var fe *creditsystem.FaultError
		if !errors.As(err, &fe) || fe.HTTPStatus != 500 {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("configured namespace", func(t *testing.T) {
		cfg := mockConfig()
		cfg.SOAPNamespace = "http://creditsystem.example/cartera"
		c, _ := mockClient(t, cfg, creditsystemtest.ScenarioSuccess)
		if _, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: cliente}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("one URL for both services", func(t *testing.T) {
		cfg := mockConfig()
		cfg.CentralURL = cfg.CarteraURL
		c, _ := mockClient(t, cfg, creditsystemtest.ScenarioSuccess)
		callEach(t.Context(), c)
		if _, err := c.ConsultarAlternativaFinanciacion(t.Context(), creditsystem.ConsultarAlternativaFinanciacionRequest{NumeroTarjeta: cliente, Monto: d("1")}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("operation on the wrong service", func(t *testing.T) {
		cfg := mockConfig()
		swapped := cfg
		swapped.CarteraURL, swapped.CentralURL = cfg.CentralURL, cfg.CarteraURL
		mt := httpmock.NewMockTransport()
		if err := creditsystemtest.RegisterResponders(mt, cfg, creditsystemtest.ScenarioSuccess); err != nil {
			t.Fatal(err)
		}
		wrong, _ := creditsystem.New(swapped, creditsystem.WithHTTPClient(&http.Client{Transport: mt}))
		_, err := wrong.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: cliente})
		var fe *creditsystem.FaultError
		if !errors.As(err, &fe) || !strings.Contains(fe.Code, "ActionNotSupported") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("unknown scenario", func(t *testing.T) {
		if err := creditsystemtest.RegisterResponders(httpmock.NewMockTransport(), mockConfig(), "nope"); err == nil {
			t.Fatal("no error")
		}
	})
}
