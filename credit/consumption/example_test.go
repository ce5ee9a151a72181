package consumption_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/credit"
	"github.com/platform/integrations/credit/consumption"
	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/internal/storage"
)

// An authorization, its OTP and its confirmation against the creditsystem fake; then an
// operation the state no longer allows, and an input the rules refuse.
func ExampleService() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "consumos-example")
	defer os.RemoveAll(dir)
	db, err := storage.Open(ctx, filepath.Join(dir, "credit.db"))
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if _, err := storage.Migrate(ctx, db, credit.MigrationsTable, credit.Migrations); err != nil {
		panic(err)
	}
	fake := creditsystemtest.NewServer()
	defer fake.Close()
	cfg := fake.Config()
	cfg.Timeout = 2 * time.Second
	cs, _ := creditsystem.New(cfg)
	svc, _ := consumption.NewService(consumption.NewStore(db), cs)

	in := consumption.AutorizacionInput{
		CodigoEmpresa: "000598", Identificacion: "0102030405", NumeroTarjeta: "4000000000000001", CodigoProducto: "001",
		Plazo: 3, Monto: decimal.RequireFromString("150.00"), PuntoVenta: "PV-1",
	}
	c, res, err := svc.Autorizar(ctx, in)
	fmt.Println(err, c.AutorizacionID, c.Estado, res.CodigoSeguridadEnviado)

	c, err = svc.RegistrarOTP(ctx, consumption.OTPInput{AutorizacionID: c.AutorizacionID, OTP: "482913"})
	fmt.Println(err, c.Estado)

	fecha, _ := consumption.ParseFecha("2026-01-15")
	c, conf, err := svc.Confirmar(ctx, consumption.ConfirmacionInput{AutorizacionID: c.AutorizacionID, Factura: consumption.Factura{
		NumeroFactura: "001-001-000000042", MontoFacturado: decimal.RequireFromString("150.00"), FechaFactura: fecha,
	}})
	fmt.Println(err, c.Estado, len(conf.TablaAmortizacion))

	_, err = svc.Reversar(ctx, consumption.ReversoInput{AutorizacionID: c.AutorizacionID})
	fmt.Println(err)

	in.Monto, in.Plazo = decimal.RequireFromString("-5.00"), 0
	_, _, err = svc.Autorizar(ctx, in)
	fmt.Println(err)
	// Output:
	// <nil> AUT0000001 AUTORIZADO true
	// <nil> OTP_RECIBIDO
	// <nil> CONSUMIDO 3
	// authorization AUT0000001 is in state CONSUMIDO, which does not allow reverso
	// invalid input: plazo must be at least 1; monto must be greater than zero
}
