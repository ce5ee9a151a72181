package creditsystem_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
)

// A credit-line query (POST /consumo/cupo) against the in-process fake.
func ExampleClient_ConsultarTarjeta() {
	srv := creditsystemtest.NewServer()
	defer srv.Close()

	client, err := creditsystem.New(srv.Config()) // CarteraURL, CentralURL, Usuario, Terminal...
	if err != nil {
		log.Fatal(err)
	}
	res, err := client.ConsultarTarjeta(context.Background(), creditsystem.ConsultarTarjetaRequest{
		Identificacion: "0912345678", // no card number: the identification is sent in its place
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(*res.Cliente, *res.NumeroTarjeta, res.FechaUltimaCompra == nil)
	for _, c := range res.Cupos {
		fmt.Println(*c.CodigoTipoCupo, *c.DescripcionTipoCupo, c.CupoDisponible.StringFixed(2))
	}
	// Output:
	// CLIENTE 0912345678 0912345678 true
	// 001 CREDITO DIRECTO 5000.00
}

// Money in answers is decimal.Decimal, exactly as the creditsystem wrote it: StringFixed(2)
// prints it with its cents; String, and so Println, drops the trailing zeros.
func Example_money() {
	srv := creditsystemtest.NewServer()
	defer srv.Close()
	client, err := creditsystem.New(srv.Config())
	if err != nil {
		log.Fatal(err)
	}
	res, err := client.ConsultarTarjeta(context.Background(), creditsystem.ConsultarTarjetaRequest{Identificacion: "0912345678"})
	if err != nil {
		log.Fatal(err)
	}
	disponible := *res.Cupos[0].CupoDisponible
	fmt.Println(disponible.StringFixed(2))
	fmt.Println(disponible)
	// Output:
	// 5000.00
	// 5000
}

// An authorization (POST /consumo/autorizacion), with the customer-without-card case handled
// through errors.Is.
func ExampleClient_GrabarAutorizacion() {
	srv := creditsystemtest.NewServer()
	defer srv.Close()
	client, err := creditsystem.New(srv.Config())
	if err != nil {
		log.Fatal(err)
	}

	authorize := func(identificacion, monto string) {
		res, err := client.GrabarAutorizacion(context.Background(), creditsystem.GrabarAutorizacionRequest{
			Identificacion: identificacion,
			CodigoProducto: "001",
			Plazo:          6,
			Monto:          decimal.RequireFromString(monto),
			PuntoVenta:     "PV-QUITO-01",
		})
		var business *creditsystem.Error
		switch {
		case errors.Is(err, creditsystem.ErrCardNotFound):
			fmt.Println(identificacion, "-> customer without card (404)")
		case errors.As(err, &business):
			fmt.Printf("%s -> rejected, nNumeroError %d: %s (502)\n", identificacion, business.Code, business.Message)
		case err != nil:
			fmt.Println(identificacion, "-> upstream unavailable:", creditsystem.IsTimeout(err))
		default:
			fmt.Println(identificacion, "->", *res.NumeroAutorizacion, "OTP sent:", res.CodigoSeguridadEnviado)
		}
	}
	authorize("0000000002", "100.00")
	authorize("0912345678", "666.66")
	authorize("0912345678", "1200.00")
	// Output:
	// 0000000002 -> customer without card (404)
	// 0912345678 -> rejected, nNumeroError 51: Cupo insuficiente (502)
	// 0912345678 -> AUT0000001 OTP sent: true
}
