// Command carrier-topup shows how another team calls the carrier SDK: it
// builds a carrier.Client from the environment (CARRIER_SPR_URL, CARRIER_USER,
// CARRIER_PASSWORD, CARRIER_COMPANY_ID, CARRIER_TIMEOUT, CARRIER_OAUTH_*), or
// in mock mode an in-process fake SPR (carriertest.NewMock) when
// CARRIER_SPR_URL is unset or CARRIER_MOCK_MODE=true, performs one top-up and
// then queries the carrier for the same external transaction id.
//
// What it demonstrates: the program decides by the SDK's own vocabulary,
// errors.Is(err, carrier.ErrInvalidRequest) and upstream.KindOf(err). A nil
// error is applied; a request refused before sending, a business error
// (upstream.Rejected) or a SOAP fault (upstream.Fault) is refused, which is
// final; a call that never left (upstream.NotSent) was not applied and may be
// sent again with the same id; a call whose outcome is unknown
// (upstream.OutcomeUnknown, a timeout for instance) may have acted, so it is
// never sent again but reconciled with QueryRecharge, whose answer decides.
// A faultcode 350 is recognised with errors.Is(err, carrier.ErrIPNotAuthorized);
// the audit copy (masked XML) is always there to store, and no secret is
// printed. The lines "topup:" and "query:" name each call's result as the
// SDK does ("ok", "invalid-request" or the upstream kind); "final:" is the
// decision: applied, refused, not-applied or unknown. The exit status is 0
// only when the top-up is applied.
//
//	go run ./examples/carrier-topup -subscriber 593990000001   # rejected: no balance
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
	fmt.Fprintf(stdout, "topup: %s %s\n", sdkWord(topupErr), describe(res, topupErr))
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
	fmt.Fprintf(stdout, "query: %s %s\n", sdkWord(queryErr), describe(q, queryErr))

	// Only a top-up that may have acted needs the query: applied and refused
	// are final, and one that never left was not applied. The carrier's
	// SUCCESS makes it applied; its refusal (transaction not found) means
	// nothing was applied. Either way the same id may be sent again later,
	// never a new one.
	final := decide(topupErr)
	switch {
	case final == notApplied:
		fmt.Fprintln(stdout, "reconciled: never sent, so not applied; safe to send again with the same id")
	case final != unknown:
	case queryErr == nil:
		final, topupErr = applied, nil
	case upstream.KindOf(queryErr) == upstream.Rejected:
		final = notApplied
		fmt.Fprintln(stdout, "reconciled: not applied by the carrier; safe to send again with the same id")
	default:
		fmt.Fprintln(stdout, "reconciled: unknown yet; query again later, do not top up again")
	}
	fmt.Fprintln(stdout, "final:", final)
	if final == applied {
		return nil
	}
	return fmt.Errorf("top-up %s: %w", final, topupErr)
}

// What this program makes of a top-up's error.
const (
	applied    = "applied"     // nil
	refused    = "refused"     // invalid request, upstream.Rejected or upstream.Fault: final
	notApplied = "not-applied" // upstream.NotSent, or reconciled as not found: send again with the same id
	unknown    = "unknown"     // upstream.OutcomeUnknown: the carrier may have acted; query
)

// decide reads a top-up's error by kind.
func decide(err error) string {
	if err == nil {
		return applied
	}
	if errors.Is(err, carrier.ErrInvalidRequest) {
		return refused
	}
	switch upstream.KindOf(err) {
	case upstream.Rejected, upstream.Fault:
		return refused
	case upstream.NotSent:
		return notApplied
	}
	// OutcomeUnknown, or an error no SDK call reported: nobody knows whether
	// the carrier acted.
	return unknown
}

// sdkWord names a call's result in the SDK's words: "ok", "invalid-request"
// (nothing was sent) or the upstream kind of the error.
func sdkWord(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, carrier.ErrInvalidRequest):
		return "invalid-request"
	}
	return upstream.KindOf(err).String()
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
