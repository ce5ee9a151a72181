// Command erp-client shows how another team calls the erp SDK: it builds an
// erp.Client from the environment (ERP_URL, ERP_TIMEOUT, ERP_API_KEY,
// ERP_API_KEY_HEADER, ERP_LOOKUP_PATH, ERP_CLIENTS_PATH), or against an
// in-process fake ERP (erptest) when ERP_URL is unset, looks a client up and
// creates it when the ERP does not know it.
//
// What it demonstrates: an unknown client is a result (Found false), not an
// error; the ERP refusing (error_api true, or an HTTP error status) is an
// *erp.Error reached with errors.As; every failure of a call is an
// upstream.Error whose kind says what became of the operation. A create whose
// outcome is unknown (a timeout, a dropped connection) is not sent again,
// because the ERP may have applied it: a second lookup tells. Credit
// limits are decimals, never float64. The exit status is 0 when the client
// exists in the ERP at the end.
//
//	go run ./examples/erp-client -identificacion 0999999999  # already in the ERP
//	go run ./examples/erp-client -nombre ERROR_API           # the ERP refuses
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

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/upstream"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "erp-client:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("erp-client", flag.ContinueOnError)
	fs.SetOutput(stdout)
	empresa := fs.String("empresa", "000598", "codigo_empresa")
	identificacion := fs.String("identificacion", "0102030405", "the client's national id")
	nombre := fs.String("nombre", "MARIA PEREZ", "nombre_cliente of the client to create")
	telefono := fs.String("telefono", "0991234567", "telefono_1 (sent as numero_telefono_1)")
	limite := fs.String("limite", "1500.50", "limite_credito_1, an exact decimal (empty: not sent)")
	timeout := fs.Duration("timeout", 0, "deadline of each ERP call (default ERP_TIMEOUT seconds, else 30s)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	payload := erp.ClientPayload{CodigoEmpresa: *empresa, Identificacion: *identificacion,
		NombreCliente: *nombre, Telefono1: *telefono}
	if *limite != "" {
		d, err := decimal.NewFromString(*limite)
		if err != nil || d.IsNegative() {
			return fmt.Errorf("-limite %q is not a non-negative decimal", *limite)
		}
		payload.LimiteCredito1 = &d
	}

	c, mode, closeFn, err := newClient(*timeout)
	if err != nil {
		return err
	}
	defer closeFn()
	fmt.Fprintln(stdout, "mode:", mode)

	found, err := lookup(ctx, c, stdout, *empresa, *identificacion)
	if err != nil || found {
		return err
	}

	res, err := c.SyncClient(ctx, erp.OperationCreate, payload)
	var apiErr *erp.Error
	switch {
	case err == nil:
		fmt.Fprintf(stdout, "create: codigo_cliente=%s mensaje=%q\n", res.CodigoCliente, res.Message)
		return nil
	case errors.As(err, &apiErr):
		kind := "error_api true"
		if !apiErr.IsErrorAPI() {
			kind = "an HTTP error status"
		}
		fmt.Fprintf(stdout, "create: refused by the ERP with %s (HTTP %d): %s\n", kind, apiErr.HTTPStatus, apiErr.Message)
		return err
	case upstream.KindOf(err) == upstream.OutcomeUnknown:
		// The create may have been applied: look, never send it twice.
		fmt.Fprintf(stdout, "create: outcome unknown (timeout=%t); not sent again, looking the client up\n", erp.IsTimeout(err))
		if found, lerr := lookup(ctx, c, stdout, *empresa, *identificacion); lerr == nil && found {
			return nil
		}
		return err
	default:
		fmt.Fprintf(stdout, "create: no usable answer: %v\n", err)
		return err
	}
}

func lookup(ctx context.Context, c *erp.Client, stdout io.Writer, empresa, identificacion string) (bool, error) {
	r, err := c.LookupClient(ctx, empresa, identificacion)
	var apiErr *erp.Error
	switch {
	case errors.As(err, &apiErr):
		fmt.Fprintf(stdout, "lookup: refused by the ERP (HTTP %d): %s\n", apiErr.HTTPStatus, apiErr.Message)
		return false, err
	case err != nil:
		fmt.Fprintf(stdout, "lookup: no usable answer (%s, timeout=%t): %v\n", upstream.KindOf(err), erp.IsTimeout(err), err)
		return false, err
	case !r.Found:
		fmt.Fprintf(stdout, "lookup: %s not in the ERP\n", identificacion)
		return false, nil
	}
	fmt.Fprintf(stdout, "lookup: found codigo_cliente=%s nombre_cliente=%q\n", r.Client.CodigoCliente, r.Client.NombreCliente)
	return true, nil
}

func newClient(timeout time.Duration) (*erp.Client, string, func(), error) {
	if timeout == 0 {
		secs := 30.0
		if v := os.Getenv("ERP_TIMEOUT"); v != "" {
			var err error
			if secs, err = strconv.ParseFloat(v, 64); err != nil || secs <= 0 {
				return nil, "", nil, errors.New("ERP_TIMEOUT must be a positive number of seconds")
			}
		}
		timeout = time.Duration(secs * float64(time.Second))
	}
	cfg := erp.Config{
		BaseURL:      os.Getenv("ERP_URL"),
		Timeout:      timeout,
		LookupPath:   os.Getenv("ERP_LOOKUP_PATH"),
		ClientsPath:  os.Getenv("ERP_CLIENTS_PATH"),
		APIKey:       os.Getenv("ERP_API_KEY"),
		APIKeyHeader: os.Getenv("ERP_API_KEY_HEADER"),
	}
	mode, closeFn := "ERP from ERP_URL", func() {}
	if cfg.BaseURL == "" {
		srv := erptest.NewServer()
		cfg.BaseURL, cfg.LookupPath, cfg.ClientsPath = srv.URL, "", "" // the fake serves the default paths
		mode, closeFn = "in-process fake ERP", srv.Close
	}
	c, err := erp.New(cfg)
	if err != nil {
		closeFn()
		return nil, "", nil, err
	}
	return c, mode, closeFn, nil
}
