// Command creditsystem-cupo shows how another team calls the creditsystem
// SDK: it builds a creditsystem.Client from the CREDITSYSTEM_* environment,
// or against an in-process fake (creditsystemtest) when
// CREDITSYSTEM_CARTERA_URL is unset, queries a customer's credit lines
// (ConsultarTarjeta) and records an authorization (GrabarAutorizacion).
//
// What it demonstrates: a customer without card is
// errors.Is(err, creditsystem.ErrCardNotFound); any other refusal is a
// *creditsystem.Error (nNumeroError, cTextoError) reached with errors.As, a
// SOAP fault a *creditsystem.FaultError; every failure of a call is an
// upstream.Error whose kind says what became of the operation. An
// authorization whose outcome is unknown (a timeout, a dropped connection) is
// not sent again, because it may have been applied: the credit line is
// queried instead; one that was never sent (connection refused) was not. Money is decimal.Decimal end to end and printed exactly.
// Against a real creditsystem the authorization is real: reverse it
// (GrabarReversoAutorizacion) if it was only a test.
//
//	go run ./examples/creditsystem-cupo -identificacion 0000000002  # customer without card
//	go run ./examples/creditsystem-cupo -monto 666.66               # nNumeroError 51
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/upstream"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "creditsystem-cupo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("creditsystem-cupo", flag.ContinueOnError)
	fs.SetOutput(stdout)
	identificacion := fs.String("identificacion", "0912345678", "the customer's national id")
	montoFlag := fs.String("monto", "150.00", "amount to authorize, an exact decimal with at most 2 places")
	plazo := fs.Int("plazo", 6, "term in installments")
	timeout := fs.Duration("timeout", 0, "deadline of each SOAP call (default CREDITSYSTEM_TIMEOUT seconds, else 30s)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	monto, err := decimal.NewFromString(*montoFlag)
	if err != nil || !monto.IsPositive() || !monto.Equal(monto.Round(2)) {
		return fmt.Errorf("-monto %q is not a positive amount with at most 2 decimal places", *montoFlag)
	}

	c, mode, closeFn, err := newClient(*timeout)
	if err != nil {
		return err
	}
	defer closeFn()
	fmt.Fprintln(stdout, "mode:", mode)

	tarjeta, err := c.ConsultarTarjeta(ctx, creditsystem.ConsultarTarjetaRequest{Identificacion: *identificacion})
	if err != nil {
		return explain(stdout, "cupo", err)
	}
	fmt.Fprintf(stdout, "cupo: cliente=%q numero_tarjeta=%s\n", deref(tarjeta.Cliente), deref(tarjeta.NumeroTarjeta))
	for _, l := range tarjeta.Cupos {
		fmt.Fprintf(stdout, "cupo %s %q: asignado=%s disponible=%s utilizado=%s\n", deref(l.CodigoTipoCupo),
			deref(l.DescripcionTipoCupo), money(l.CupoAsignado), money(l.CupoDisponible), money(l.CupoUtilizado))
	}

	fmt.Fprintf(stdout, "autorizacion: monto=%s plazo=%d\n", money(&monto), *plazo)
	auth, err := c.GrabarAutorizacion(ctx, creditsystem.GrabarAutorizacionRequest{
		Identificacion: *identificacion, NumeroTarjeta: deref(tarjeta.NumeroTarjeta),
		CodigoProducto: "001", Plazo: *plazo, Monto: monto, PuntoVenta: "PV-EXAMPLE",
	})
	if err != nil {
		explain(stdout, "autorizacion", err)
		if upstream.KindOf(err) == upstream.OutcomeUnknown {
			// It moves money and may have been applied: never send it again;
			// the credit line says whether it was.
			fmt.Fprintln(stdout, "autorizacion: not sent again; querying the credit line")
			if after, qerr := c.ConsultarTarjeta(ctx, creditsystem.ConsultarTarjetaRequest{Identificacion: *identificacion}); qerr == nil {
				for _, l := range after.Cupos {
					fmt.Fprintf(stdout, "cupo %s after the failed call: disponible=%s\n", deref(l.CodigoTipoCupo), money(l.CupoDisponible))
				}
			}
		}
		return err
	}
	fmt.Fprintf(stdout, "autorizacion: autorizacion_id=%s numero_operacion=%d codigo_seguridad_enviado=%t biometria_requerida=%t\n",
		deref(auth.NumeroAutorizacion), deref(auth.NumeroOperacion), auth.CodigoSeguridadEnviado, auth.BiometriaRequerida)
	return nil
}

// explain prints what a caller should make of err and returns it unchanged.
func explain(stdout io.Writer, step string, err error) error {
	var biz *creditsystem.Error
	var fault *creditsystem.FaultError
	switch {
	case errors.Is(err, creditsystem.ErrCardNotFound):
		fmt.Fprintf(stdout, "%s: customer without card (nNumeroError %d)\n", step, creditsystem.CodeCardNotFound)
	case errors.As(err, &biz):
		fmt.Fprintf(stdout, "%s: rejected by the creditsystem, nNumeroError %d: %s\n", step, biz.Code, biz.Message)
	case errors.As(err, &fault):
		fmt.Fprintf(stdout, "%s: SOAP fault %s in HTTP %d\n", step, fault.Code, fault.HTTPStatus)
	case creditsystem.IsTimeout(err):
		fmt.Fprintf(stdout, "%s: timed out, outcome unknown\n", step)
	case upstream.KindOf(err) == upstream.NotSent:
		fmt.Fprintf(stdout, "%s: not sent, nothing applied: %v\n", step, err)
	default:
		fmt.Fprintf(stdout, "%s: creditsystem unavailable, outcome unknown: %v\n", step, err)
	}
	return err
}

// money prints an amount exactly: two places at least, more only if it has them.
func money(d *decimal.Decimal) string {
	if d == nil {
		return "null"
	}
	if d.Equal(d.Round(2)) {
		return d.StringFixed(2)
	}
	return d.String()
}

func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

func newClient(timeout time.Duration) (*creditsystem.Client, string, func(), error) {
	if timeout == 0 {
		if v := os.Getenv("CREDITSYSTEM_TIMEOUT"); v != "" {
			secs, err := strconv.ParseFloat(v, 64)
			if err != nil || secs <= 0 {
				return nil, "", nil, errors.New("CREDITSYSTEM_TIMEOUT must be a positive number of seconds")
			}
			timeout = time.Duration(secs * float64(time.Second))
		}
	}
	cfg := creditsystem.Config{
		CarteraURL:    os.Getenv("CREDITSYSTEM_CARTERA_URL"),
		CentralURL:    os.Getenv("CREDITSYSTEM_CENTRAL_URL"),
		SOAPNamespace: os.Getenv("CREDITSYSTEM_SOAP_NAMESPACE"),
		Usuario:       os.Getenv("CREDITSYSTEM_USUARIO"),
		CodigoEmpresa: os.Getenv("CREDITSYSTEM_CODIGO_EMPRESA"),
		Terminal:      os.Getenv("CREDITSYSTEM_TERMINAL"),
		OTPBypass:     os.Getenv("CREDITSYSTEM_OTP_BYPASS"),
	}
	mode, closeFn := "creditsystem from CREDITSYSTEM_CARTERA_URL", func() {}
	if cfg.CarteraURL == "" {
		srv := creditsystemtest.NewServer()
		cfg = srv.Config() // its URLs and the development constants
		mode, closeFn = "in-process fake creditsystem", srv.Close
	}
	cfg.Timeout = timeout // zero: the SDK's 30 s
	c, err := creditsystem.New(cfg)
	if err != nil {
		closeFn()
		return nil, "", nil, err
	}
	return c, mode, closeFn, nil
}
