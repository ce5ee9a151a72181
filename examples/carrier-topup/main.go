// Command carrier-topup shows how another team calls the carrier SDK: it
// builds a carrier.Client from the environment (CARRIER_SPR_URL, CARRIER_USER,
// CARRIER_PASSWORD, CARRIER_COMPANY_ID, CARRIER_TIMEOUT, CARRIER_OAUTH_*), or
// in mock mode an in-process fake SPR (carriertest.NewMock) when
// CARRIER_SPR_URL is unset or CARRIER_MOCK_MODE=true, performs one top-up and
// then queries the carrier for the same external transaction id.
//
// What it demonstrates: the outcome comes from carrier.Outcome (success,
// failed, unavailable) and the upstream kind of a failure from
// upstream.KindOf; a faultcode 350 is recognised with
// errors.Is(err, carrier.ErrIPNotAuthorized); a top-up whose outcome is
// unknown (a timeout) is never sent again, it is reconciled with
// QueryRecharge, whose answer decides the final state; the audit copy (masked XML) is always there to store, and no
// secret is printed. The exit status is 0 only when the top-up is applied.
//
//	go run ./examples/carrier-topup -subscriber 593990000001   # failed: no balance
//	go run ./examples/carrier-topup -subscriber 593990000004 -timeout 1s  # late success
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

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/upstream"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "carrier-topup:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("carrier-topup", flag.ContinueOnError)
	fs.SetOutput(stdout)
	subscriber := fs.String("subscriber", "593987654321", "SUBSCRIBERID: 12 digits, 593 then 8 or 9")
	offer := fs.String("offer", "31", "OFFERID: the carrier's offer id (31 is Pin 3)")
	operation := fs.String("operation", carrier.ExternalOperationPins, "EXTERNALOPERATION: RECARGA_PINES or RECARGA_DATOS")
	timeout := fs.Duration("timeout", 0, "deadline of each SPR call (default CARRIER_TIMEOUT seconds, else 30s)")
	if err := fs.Parse(args); err != nil {
		return err
	}

	c, mode, closeFn, err := newClient(*timeout)
	if err != nil {
		return err
	}
	defer closeFn()
	fmt.Fprintln(stdout, "mode:", mode)

	// The id is made once and kept: the carrier keys the top-up by it, so any
	// later attempt with the same id cannot top up twice.
	id := carrier.NewExternalTransactionID()
	fmt.Fprintln(stdout, "external_transaction_id:", id)
	res, topupErr := c.Topup(ctx, carrier.TopupRequest{
		ExternalOperation: *operation, ExternalTransactionID: id,
		OfferID: *offer, SubscriberID: *subscriber, Quantity: 1,
	})
	// Store res.Exchange before looking at the error: it is the audit record,
	// with the PASSWORD already masked.
	fmt.Fprintf(stdout, "audit: request %d bytes, response %d bytes of masked XML\n",
		len(res.Exchange.Request), len(res.Exchange.Response))
	outcome := carrier.Outcome(topupErr)
	fmt.Fprintf(stdout, "topup: %s %s\n", outcome, describe(res, topupErr))
	if k := upstream.KindOf(topupErr); k != 0 {
		fmt.Fprintln(stdout, "kind:", k)
	}
	switch {
	case errors.Is(topupErr, carrier.ErrIPNotAuthorized):
		fmt.Fprintln(stdout, "hint: the carrier does not accept our outgoing IP address (faultcode 350)")
	case carrier.IsTimeout(topupErr):
		fmt.Fprintln(stdout, "hint: timed out; not sent again, reconciling with sre_consulta_recarga")
	case upstream.KindOf(topupErr) == upstream.NotSent:
		fmt.Fprintln(stdout, "hint: never left this process; safe to send again with the same id")
	}

	if errors.Is(topupErr, carrier.ErrInvalidRequest) {
		return fmt.Errorf("top-up not sent: %w", topupErr)
	}
	q, queryErr := c.QueryRecharge(ctx, carrier.QueryRequest{ExternalTransactionID: id, OfferID: *offer})
	fmt.Fprintf(stdout, "query: %s %s\n", carrier.Outcome(queryErr), describe(q, queryErr))

	// Only an unavailable top-up that may have reached the carrier needs the
	// query: success and failed are final, and one that never left was not
	// applied. The carrier's SUCCESS turns it into a success; its ERROR means
	// nothing was applied. Either way the same id may be sent again later,
	// never a new one.
	var biz *carrier.Error
	switch {
	case outcome != carrier.OutcomeUnavailable:
	case upstream.KindOf(topupErr) == upstream.NotSent:
		fmt.Fprintln(stdout, "reconciled: never sent, so not applied; safe to send again with the same id")
	case queryErr == nil:
		outcome, topupErr = carrier.OutcomeSuccess, nil
	case errors.As(queryErr, &biz):
		fmt.Fprintln(stdout, "reconciled: not applied by the carrier; safe to send again with the same id")
	default:
		fmt.Fprintln(stdout, "reconciled: unknown yet; query again later, do not top up again")
	}
	fmt.Fprintln(stdout, "final:", outcome)
	if outcome == carrier.OutcomeSuccess {
		return nil
	}
	return fmt.Errorf("top-up %s: %w", outcome, topupErr)
}

// describe prints the carrier's answer without anything secret: the status
// fields, or the error, whose text the SDK keeps free of credentials.
func describe(r *carrier.Result, err error) string {
	if err != nil && r.Status == "" {
		return fmt.Sprintf("error=%q", err.Error())
	}
	return fmt.Sprintf("STATUS=%s ID_CODIGO=%s ID_RECARGA=%s MENSAJE=%q", r.Status, r.IDCodigo, r.IDRecarga, r.Mensaje)
}

func newClient(timeout time.Duration) (*carrier.Client, string, func(), error) {
	if timeout == 0 {
		secs, err := strconv.ParseFloat(envOr("CARRIER_TIMEOUT", "30"), 64)
		if err != nil || secs <= 0 {
			return nil, "", nil, errors.New("CARRIER_TIMEOUT must be a positive number of seconds")
		}
		timeout = time.Duration(secs * float64(time.Second))
	}
	cfg := carrier.Config{
		URL:       os.Getenv("CARRIER_SPR_URL"),
		User:      os.Getenv("CARRIER_USER"),
		Password:  os.Getenv("CARRIER_PASSWORD"),
		CompanyID: os.Getenv("CARRIER_COMPANY_ID"),
		Timeout:   timeout,
	}
	if tokenURL := os.Getenv("CARRIER_OAUTH_TOKEN_URL"); tokenURL != "" {
		cfg.OAuth2 = &carrier.OAuth2Config{TokenURL: tokenURL,
			ClientID: os.Getenv("CARRIER_OAUTH_CLIENT_ID"), ClientSecret: os.Getenv("CARRIER_OAUTH_CLIENT_SECRET")}
	}
	if cfg.URL == "" || os.Getenv("CARRIER_MOCK_MODE") == "true" {
		c, fake, err := carriertest.NewMock(cfg)
		if err != nil {
			return nil, "", nil, err
		}
		return c, "mock (in-process fake SPR)", fake.Close, nil
	}
	c, err := carrier.New(cfg)
	if err != nil {
		return nil, "", nil, err
	}
	return c, "SPR from CARRIER_SPR_URL", func() {}, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
