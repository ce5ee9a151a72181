package payments_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/credit"
	"github.com/platform/integrations/credit/payments"
	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/storage"
)

// A full cash payment of a card's debt against the creditsystem fake, its reversal, and a
// payment the rules refuse before anything is sent.
func ExampleService_Aplicar() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "pagos-example")
	defer os.RemoveAll(dir)
	db, err := storage.Open(ctx, filepath.Join(dir, "credit.db"))
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if _, err := storage.Migrate(ctx, db, credit.MigrationsTable, credit.Migrations); err != nil {
		panic(err)
	}
	if err := jobs.Migrate(ctx, db); err != nil {
		panic(err)
	}
	queue, _ := jobs.New(db, nil, jobs.Config{}) // insert-only: a worker elsewhere sends the hand-overs
	fake := creditsystemtest.NewServer()
	defer fake.Close()
	cfg := fake.Config()
	cfg.Timeout = 2 * time.Second
	cs, _ := creditsystem.New(cfg)
	svc, _ := payments.NewService(payments.NewStore(db, queue), cs)

	// A debt: 300.00 in three installments, invoiced today.
	a, _ := cs.GrabarAutorizacion(ctx, creditsystem.GrabarAutorizacionRequest{Identificacion: "0912345678",
		CodigoProducto: "001", Plazo: 3, Monto: decimal.RequireFromString("300.00"), PuntoVenta: "PV-1"})
	_, _ = cs.GrabarConsumo(ctx, creditsystem.GrabarConsumoRequest{NumeroAutorizacion: *a.NumeroAutorizacion,
		Identificacion: "0912345678", NumeroFactura: "F-1", MontoFacturado: decimal.RequireFromString("300.00"),
		Monto: decimal.RequireFromString("300.00"), Plazo: 3, FechaFactura: creditsystem.DateOf(time.Now())})

	deuda, _ := svc.ConsultarDeuda(ctx, payments.DeudaInput{NumeroTarjeta: "0912345678"})
	fmt.Println("pagoContado", deuda.PagoContado.StringFixed(2))

	p, err := svc.Aplicar(ctx, payments.PagoInput{NumeroTarjeta: "0912345678", ValorPago: *deuda.PagoContado,
		FechaPago: creditsystem.DateOf(time.Now()), SolicitadoPor: "cajero-1",
		FormasPago: []payments.FormaPago{{Codigo: payments.FormaEfectivo, Valor: *deuda.PagoContado}}})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Estado)
	for _, r := range p.RubrosAplicados {
		fmt.Println(" ", r.Codigo, r.TipoDocumento, r.Valor.StringFixed(2))
	}

	r, _ := svc.Reversar(ctx, payments.ReversoInput{NumeroOperacion: *p.NumeroOperacion, Motivo: "cheque devuelto"})
	fmt.Println(r.Estado)

	_, err = svc.Aplicar(ctx, payments.PagoInput{NumeroTarjeta: "0912345678", ValorPago: decimal.RequireFromString("0.30"),
		FechaPago: creditsystem.DateOf(time.Now()), FormasPago: []payments.FormaPago{
			{Codigo: payments.FormaEfectivo, Valor: decimal.RequireFromString("0.10")},
			{Codigo: payments.FormaEfectivo, Valor: decimal.RequireFromString("0.10")}}})
	fmt.Println(errors.Is(err, payments.ErrRule), err)
	// Output:
	// pagoContado 300.00
	// APLICADO
	//   INT FAC 13.50
	//   CAP FAC 300.00
	//   DPP NC -13.50
	// REVERSADO
	// true the formasPago add up to 0.20, not to valorPago 0.30
}
