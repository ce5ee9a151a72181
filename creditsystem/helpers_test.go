package creditsystem_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/creditsystem/internal/cartera"
	"github.com/platform/integrations/creditsystem/internal/central"
)

// testNow is the fake's clock in tests, so dates in answers are stable.
var testNow = time.Date(2025, 3, 10, 15, 4, 5, 0, time.UTC)

const (
	card1   = "0912345678"
	ident1  = "0912345678001"
	factura = "001-002-000000123"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// newFake starts a fake and a client for it with a short timeout and a credit line large
// enough for the 1000000.00 amounts of the golden requests.
func newFake(t testing.TB, opts ...creditsystemtest.Option) (*creditsystemtest.Server, *creditsystem.Client) {
	t.Helper()
	opts = append([]creditsystemtest.Option{
		creditsystemtest.WithClock(func() time.Time { return testNow }),
		creditsystemtest.WithCreditLine(dec("5000000.00")),
	}, opts...)
	srv := creditsystemtest.NewServer(opts...)
	t.Cleanup(srv.Close)
	cfg := srv.Config()
	cfg.Timeout = 2 * time.Second
	c, err := creditsystem.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func newClient(t testing.TB, cfg creditsystem.Config, opts ...creditsystem.Option) *creditsystem.Client {
	t.Helper()
	c, err := creditsystem.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// prepared carries what earlier operations produced for the one under test.
type prepared struct {
	autorizacion    string
	numeroOperacion int64
}

type opCase struct {
	op string
	// prepare makes the success of call possible (an authorization to confirm, ...).
	prepare func(t *testing.T, ctx context.Context, c *creditsystem.Client) prepared
	call    func(ctx context.Context, c *creditsystem.Client, p prepared) (any, error)
	// result is the generated answer wrapper, for building raw answers.
	result any
	dcns   string
	check  func(t *testing.T, res any)
}

func authorize(t *testing.T, ctx context.Context, c *creditsystem.Client, monto string) string {
	t.Helper()
	a, err := c.GrabarAutorizacion(ctx, creditsystem.GrabarAutorizacionRequest{
		Identificacion: ident1, NumeroTarjeta: card1, CodigoProducto: "001", Plazo: 6,
		Monto: dec(monto), PuntoVenta: "PV-QUITO-01",
	})
	if err != nil {
		t.Fatalf("prepare: GrabarAutorizacion: %v", err)
	}
	return *a.NumeroAutorizacion
}

func consume(t *testing.T, ctx context.Context, c *creditsystem.Client, auth, monto string) {
	t.Helper()
	_, err := c.GrabarConsumo(ctx, creditsystem.GrabarConsumoRequest{
		NumeroAutorizacion: auth, NumeroFactura: factura, MontoFacturado: dec(monto),
		FechaFactura: creditsystem.NewDate(2025, 3, 10), CodigoProducto: "001",
		Identificacion: ident1, NumeroTarjeta: card1, Plazo: 6, Monto: dec(monto),
	})
	if err != nil {
		t.Fatalf("prepare: GrabarConsumo: %v", err)
	}
}

func noPrep(*testing.T, context.Context, *creditsystem.Client) prepared { return prepared{} }

// operations has one case per operation of both services, with requests that carry the
// money values of the specification's wire rule (1000000.00 and 0.01).
var operations = []opCase{
	{
		op:      "ConsultarTarjeta",
		prepare: noPrep,
		call: func(ctx context.Context, c *creditsystem.Client, _ prepared) (any, error) {
			return c.ConsultarTarjeta(ctx, creditsystem.ConsultarTarjetaRequest{Identificacion: ident1, NumeroTarjeta: card1})
		},
		result: &cartera.ConsultarTarjetaResponse{}, dcns: cartera.WSDLDataContractNamespace,
		check: func(t *testing.T, res any) {
			r := res.(*creditsystem.ConsultarTarjetaResponse)
			if *r.NumeroTarjeta != card1 || *r.Cliente == "" || r.FechaActivacion.String() != "2024-03-10" || r.FechaUltimaCompra != nil {
				t.Errorf("card = %v %v %v %v", *r.NumeroTarjeta, *r.Cliente, r.FechaActivacion, r.FechaUltimaCompra)
			}
			if len(r.Cupos) != 1 || !r.Cupos[0].CupoDisponible.Equal(dec("5000000")) || len(r.Cupos[0].Operaciones) != 1 {
				t.Errorf("cupos = %+v", r.Cupos)
			}
		},
	},
	{
		op:      "ConsultarAlternativaFinanciacion",
		prepare: noPrep,
		call: func(ctx context.Context, c *creditsystem.Client, _ prepared) (any, error) {
			return c.ConsultarAlternativaFinanciacion(ctx, creditsystem.ConsultarAlternativaFinanciacionRequest{
				NumeroTarjeta: card1, CodigoProducto: "001", CodigoTipoCupo: "001", Monto: dec("1000000.00"),
				Articulos: []creditsystem.Articulo{{CodigoArticulo: "A-1", TextoArticulo: "CABLE USB", Cantidad: 1, Precio: dec("0.01"), Caracteristicas: "COL:NEGRO-LAR:1M"}},
			})
		},
		result: &central.ConsultarAlternativaFinanciacionResponse{}, dcns: central.WSDLDataContractNamespace,
		check: func(t *testing.T, res any) {
			r := res.(*creditsystem.ConsultarAlternativaFinanciacionResponse)
			if len(r.Alternativas) == 0 {
				t.Fatal("no alternatives")
			}
			for _, a := range r.Alternativas {
				if !a.DeudaTotal.Equal(dec("1000000").Add(*a.InteresTotal)) {
					t.Errorf("plazo %d: deuda %s != monto + interes %s", *a.Plazo, a.DeudaTotal, a.InteresTotal)
				}
			}
		},
	},
	{
		op:      "GrabarAutorizacion",
		prepare: noPrep,
		call: func(ctx context.Context, c *creditsystem.Client, _ prepared) (any, error) {
			ci := dec("0.01")
			return c.GrabarAutorizacion(ctx, creditsystem.GrabarAutorizacionRequest{
				Identificacion: ident1, NumeroTarjeta: card1, CodigoProducto: "001", CodigoTipoCupo: "001",
				CodigoTipoOperacion: "001", Plazo: 12, Monto: dec("1000000.00"), CuotaInicial: &ci,
				GarantiaExtendida: true, PuntoVenta: "PV-QUITO-01",
				Articulos: []creditsystem.Articulo{{TextoArticulo: "REFRIGERADORA", Cantidad: 2, Precio: dec("500000.00")}},
			})
		},
		result: &cartera.GrabarAutorizacionResponse{}, dcns: cartera.WSDLDataContractNamespace,
		check: func(t *testing.T, res any) {
			r := res.(*creditsystem.GrabarAutorizacionResponse)
			if r.NumeroAutorizacion == nil || r.NumeroOperacion == nil || !r.CodigoSeguridadEnviado || r.ImagenQR != nil {
				t.Errorf("authorization = %+v", r)
			}
		},
	},
	{
		op: "GrabarConsumo",
		prepare: func(t *testing.T, ctx context.Context, c *creditsystem.Client) prepared {
			return prepared{autorizacion: authorize(t, ctx, c, "1000000.00")}
		},
		call: func(ctx context.Context, c *creditsystem.Client, p prepared) (any, error) {
			iva, com := dec("120000.00"), dec("0.01")
			return c.GrabarConsumo(ctx, creditsystem.GrabarConsumoRequest{
				NumeroAutorizacion: p.autorizacion, NumeroFactura: factura, MontoFacturado: dec("1000000.00"),
				FechaFactura: creditsystem.NewDate(2025, 3, 10), ValorIva: &iva, ValorComision: &com,
				CodigoProducto: "001", CodigoTipoCupo: "001", CodigoTipoOperacion: "001",
				Identificacion: ident1, NumeroTarjeta: card1, Plazo: 6, Monto: dec("1000000.00"), Otp: "482913",
			})
		},
		result: &cartera.GrabarConsumoResponse{}, dcns: cartera.WSDLDataContractNamespace,
		check: func(t *testing.T, res any) {
			r := res.(*creditsystem.GrabarConsumoResponse)
			if len(r.TablaAmortizacion) != 6 || r.FechaMaxPago.String() != "2025-04-10" || len(r.CuposAfectados) != 1 {
				t.Fatalf("consumo = %+v", r)
			}
			capital := decimal.Zero
			for _, q := range r.TablaAmortizacion {
				capital = capital.Add(*q.ValorCapital)
				if !q.ValorCuota.Equal(q.ValorCapital.Add(*q.ValorInteres)) {
					t.Errorf("cuota %d: %s != %s + %s", *q.NumeroCuota, q.ValorCuota, q.ValorCapital, q.ValorInteres)
				}
			}
			if !capital.Equal(dec("1000000")) {
				t.Errorf("capital of the table = %s", capital)
			}
		},
	},
	{
		op: "GrabarReversoAutorizacion",
		prepare: func(t *testing.T, ctx context.Context, c *creditsystem.Client) prepared {
			return prepared{autorizacion: authorize(t, ctx, c, "1000000.00")}
		},
		call: func(ctx context.Context, c *creditsystem.Client, p prepared) (any, error) {
			return c.GrabarReversoAutorizacion(ctx, creditsystem.GrabarReversoAutorizacionRequest{NumeroAutorizacion: p.autorizacion, Identificacion: ident1})
		},
		result: &cartera.GrabarReversoAutorizacionResponse{}, dcns: cartera.WSDLDataContractNamespace,
		check: func(t *testing.T, res any) {},
	},
	{
		op: "GrabarReversoConsumo",
		prepare: func(t *testing.T, ctx context.Context, c *creditsystem.Client) prepared {
			a := authorize(t, ctx, c, "1000000.00")
			consume(t, ctx, c, a, "1000000.00")
			return prepared{autorizacion: a}
		},
		call: func(ctx context.Context, c *creditsystem.Client, _ prepared) (any, error) {
			return c.GrabarReversoConsumo(ctx, creditsystem.GrabarReversoConsumoRequest{NumeroReferencia: factura, NumeroTarjeta: card1})
		},
		result: &cartera.GrabarReversoConsumoResponse{}, dcns: cartera.WSDLDataContractNamespace,
		check: func(t *testing.T, res any) {},
	},
	{
		op:      "ConsultarDeudaTarjeta",
		prepare: noPrep,
		call: func(ctx context.Context, c *creditsystem.Client, _ prepared) (any, error) {
			return c.ConsultarDeudaTarjeta(ctx, creditsystem.ConsultarDeudaTarjetaRequest{NumeroTarjeta: card1})
		},
		result: &cartera.ConsultarDeudaTarjetaResponse{}, dcns: cartera.WSDLDataContractNamespace,
		check: func(t *testing.T, res any) {
			r := res.(*creditsystem.ConsultarDeudaTarjetaResponse)
			if !r.PagoContado.IsZero() || r.FechaProximoPago != nil || *r.NumeroTarjeta != card1 || r.CodigoCliente == nil {
				t.Errorf("deuda = %+v", r)
			}
		},
	},
	{
		op: "GrabarPagoTarjeta",
		prepare: func(t *testing.T, ctx context.Context, c *creditsystem.Client) prepared {
			consume(t, ctx, c, authorize(t, ctx, c, "1000000.00"), "1000000.00")
			return prepared{}
		},
		call: func(ctx context.Context, c *creditsystem.Client, _ prepared) (any, error) {
			return c.GrabarPagoTarjeta(ctx, creditsystem.GrabarPagoTarjetaRequest{
				NumeroTarjeta: card1, ValorPago: dec("1000000.00"), FechaPago: creditsystem.NewDate(2025, 3, 10),
				FormasPago: []creditsystem.FormaPago{
					{Codigo: creditsystem.FormaPagoEfectivo, Valor: dec("0.01")},
					{Codigo: creditsystem.FormaPagoCheque, Valor: dec("999999.99"), InstitucionFinanciera: "BANCO UNO",
						NumeroDocumento: "000123", NumeroCuenta: "2200112233", IdentCuentaCorrentista: ident1, NombreCuentaCorrentista: "CLIENTE UNO"},
				},
			})
		},
		result: &cartera.GrabarPagoTarjetaResponse{}, dcns: cartera.WSDLDataContractNamespace,
		check: func(t *testing.T, res any) {
			r := res.(*creditsystem.GrabarPagoTarjetaResponse)
			sum := decimal.Zero
			for _, rb := range r.RubrosAplicados {
				sum = sum.Add(*rb.Valor)
			}
			if r.NumeroOperacion == nil || !sum.Equal(dec("1000000.00")) || len(r.FacturasAfectadas) != 1 {
				t.Errorf("pago = %+v, rubros sum %s", r, sum)
			}
		},
	},
	{
		op: "GrabarReversoPagoTarjeta",
		prepare: func(t *testing.T, ctx context.Context, c *creditsystem.Client) prepared {
			consume(t, ctx, c, authorize(t, ctx, c, "1000000.00"), "1000000.00")
			p, err := c.GrabarPagoTarjeta(ctx, creditsystem.GrabarPagoTarjetaRequest{
				NumeroTarjeta: card1, ValorPago: dec("0.01"), FechaPago: creditsystem.NewDate(2025, 3, 10),
				FormasPago: []creditsystem.FormaPago{{Codigo: creditsystem.FormaPagoEfectivo, Valor: dec("0.01")}},
			})
			if err != nil {
				t.Fatalf("prepare: GrabarPagoTarjeta: %v", err)
			}
			return prepared{numeroOperacion: *p.NumeroOperacion}
		},
		call: func(ctx context.Context, c *creditsystem.Client, p prepared) (any, error) {
			return c.GrabarReversoPagoTarjeta(ctx, creditsystem.GrabarReversoPagoTarjetaRequest{NumeroOperacion: p.numeroOperacion, MotivoReverso: "PAGO DUPLICADO"})
		},
		result: &cartera.GrabarReversoPagoTarjetaResponse{}, dcns: cartera.WSDLDataContractNamespace,
		check: func(t *testing.T, res any) {
			r := res.(*creditsystem.GrabarReversoPagoTarjetaResponse)
			if len(r.RubrosRevertidos) == 0 || len(r.FacturasAfectadas) != 1 {
				t.Errorf("reverso = %+v", r)
			}
		},
	},
}

// roundTripperFunc adapts a function to http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
