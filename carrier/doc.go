// Package carrier is the client of the mobile carrier's provisioning
// endpoint (SPR), top-up protocol 7.0: umsprot documents (version 1) with an
// exec_req naming a function and its data elements, answered by an exec_rsp
// or a SOAP Fault.
//
//	import "github.com/platform/integrations/carrier"
//
// # Quick start
//
// Construct one Client for the process, call it with a context and a request struct, keep
// the audit copy, then tell the outcomes apart by kind:
//
//	c, err := carrier.New(carrier.Config{URL: os.Getenv("CARRIER_SPR_URL")})
//	if err != nil {
//		return err // the configuration is invalid; nobody was contacted
//	}
//	res, err := c.Topup(ctx, carrier.TopupRequest{
//		ExternalOperation:     carrier.ExternalOperationPins,
//		ExternalTransactionID: carrier.NewExternalTransactionID(), // keep it: it reconciles the top-up
//		OfferID:               "31",
//		SubscriberID:          "593987654321",
//		Quantity:              1,
//	})
//	audit(res.Exchange) // res is never nil: the exact request and answer
//	switch {
//	case err == nil: // STATUS=SUCCESS, ID_CODIGO 0: res.IDRecarga is the carrier's id
//	case errors.Is(err, carrier.ErrInvalidRequest): // refused before sending
//	case upstream.KindOf(err) == upstream.Rejected: // STATUS=ERROR (*carrier.Error): no balance, bad number...
//	case upstream.KindOf(err) == upstream.Fault:    // SOAP fault; carrier.ErrIPNotAuthorized for faultcode 350
//	case upstream.KindOf(err) == upstream.NotSent:  // never left: safe to send again
//	default: // outcome unknown (a timeout among others): ask QueryRecharge, never repeat blindly
//	}
//
// In tests and in mock mode (CARRIER_MOCK_MODE=true), carriertest.NewMock(cfg) returns the
// same Client wired to an in-process fake SPR, with no network; package carriertest/fixtures
// registers httpmock responders for callers that mock their *http.Client instead.
//
// The protocol carries no money: a top-up is an offer id and a QUANTITY. What an offer costs
// is the top-up service's product mapping (package topup).
//
// # Construction
//
//	c, err := carrier.New(carrier.Config{
//		URL:       os.Getenv("CARRIER_SPR_URL"),
//		User:      os.Getenv("CARRIER_USER"),
//		Password:  os.Getenv("CARRIER_PASSWORD"),
//		CompanyID: os.Getenv("CARRIER_COMPANY_ID"),
//		Timeout:   30 * time.Second, // CARRIER_TIMEOUT; zero means 30 s
//		OAuth2:    nil,              // or the CARRIER_OAUTH_* client credentials
//	}, carrier.WithHTTPClient(hc), carrier.WithLogger(logger))
//
// New(cfg Config, opts ...Option) validates the configuration and the options
// (WithHTTPClient(nil) and WithLogger(nil) are errors; a nil Option is
// ignored) and contacts nobody. The Client is safe for concurrent use. In mock
// mode (CARRIER_MOCK_MODE=true) use carriertest.NewMock instead, which wires
// the same Client to an in-process fake SPR.
//
// # Calls
//
//   - Topup: sre_topupd_76186 with EXTERNALOPERATION, EXTERNALTRANSACTIONID,
//     OFFERID, SUBSCRIBERID and QUANTITY, in that order.
//   - QueryRecharge: sre_consulta_recarga with USERID, PASSWORD, COMPANYID
//     from the Config, then EXTERNALTRANSACTIONID and OFFERID.
//   - Inventory: sre_consulta_inventario with USERID, PASSWORD and COMPANYID.
//
// NewExternalTransactionID makes the EXTERNALTRANSACTIONID: 26 characters
// of Crockford base32 encoding a UUIDv7, unique across processes and
// machines (see its documentation for why).
//
// # Errors
//
// The specification's success criterion is applied exactly: a call succeeds
// (nil error) only when the answer is an exec_rsp with STATUS=SUCCESS and
// ID_CODIGO=0 and there is no SOAP Fault. Otherwise the error implements
// upstream.Error (Operation, Kind, ErrorCode, ErrorMessage, Timeout) and is
// one of:
//
//   - *Error (kind upstream.Rejected): a business error, STATUS=ERROR or any
//     non-zero ID_CODIGO, with the code and MENSAJE/SYSTEMMESSAGE. The
//     carrier did not act.
//   - *FaultError (kind upstream.Fault): a SOAP Fault in any HTTP status;
//     errors.Is(err, ErrIPNotAuthorized) holds for faultcode 350 (also
//     written as a QName such as soap:350 or Server.350). The carrier did
//     not act.
//   - *TransportError: timeout, connection refused or dropped, unreachable
//     SPR, OAuth2 token failure, an HTTP status other than 2xx without a
//     Fault or a business error (ErrBadStatus), or an answer that cannot be
//     read (ErrMalformedAnswer). It names the function. Its kind is
//     upstream.NotSent when the request provably never left (the dial
//     failed, the OAuth2 token could not be obtained) and
//     upstream.OutcomeUnknown otherwise. IsTransport reports this type.
//   - ErrInvalidRequest (wrapped): a required field missing; nothing was
//     sent. It is a plain sentinel, not an upstream.Error (its kind is 0).
//
// IsTimeout reports whether err holds an upstream.Error of a call that ran
// out of time (the client's deadline, the context's, or a network timeout):
// upstream.IsTimeout(err).
//
// A caller classifies a call by kind: nil is a success;
// errors.Is(err, ErrInvalidRequest) is a request refused before sending;
// otherwise upstream.KindOf(err) says whether the carrier refused
// (upstream.Rejected, upstream.Fault: it did not act), may have acted
// (upstream.OutcomeUnknown: reconcile with QueryRecharge, never repeat blindly)
// or never got the request (upstream.NotSent). Which top-up status each of
// these leads to is the top-up domain's decision, in package topup.
//
// # Timeouts
//
// Config.Timeout (default 30 s, the specification's) bounds each call from
// sending the request to reading the last byte of the answer; a sooner
// deadline on the context wins. The OAuth2 token fetch, which x/oauth2 does
// outside the call's context, gets the same timeout through its HTTP client.
// Every way of running out of time gives a *TransportError for which
// errors.Is(err, context.DeadlineExceeded) and IsTimeout hold: Config.Timeout,
// the context's deadline, the Timeout of an http.Client given with
// WithHTTPClient, a transport's own timeout (a net.Error whose Timeout is
// true), the token fetch, before or after the headers, and also when an
// injected RoundTripper reports the deadline in its own words.
// Nothing is retried: not by this package, and not by net/http, which never
// replays a POST. A timed-out top-up must be reconciled with QueryRecharge.
//
// # Audit
//
// Every call returns a non-nil *Result (Inventory an *Inventory embedding
// one), also when it returns an error, so the caller can always store
// Result.Exchange: Request is the exact document sent with the PASSWORD value
// replaced by ********, Response the answer body as received (nil when none
// arrived). The clear password exists only on the wire: the Result, the
// errors and the log lines never carry it, and answers that echo the password
// or the OAuth2 client secret have it masked too (for secrets of at least 4
// characters; shorter ones would mangle ordinary words and protect nothing).
//
// # Metrics
//
// OperationFromContext returns the carrier function name from the context
// of every request the client sends (OperationOAuth2Token for token
// requests), for a RoundTripper injected with WithHTTPClient to label
// calls.
//
// # Decisions where the specification is silent
//
//   - An answer without STATUS or ID_CODIGO, or with an unknown STATUS, or
//     with STATUS twice with different values, does not decide the outcome
//     and is ErrMalformedAnswer (kind upstream.OutcomeUnknown), not a
//     business error: the top-up may have happened, so it must be
//     reconciled, not reported as refused. STATUS=ERROR without ID_CODIGO
//     is still a business error.
//   - STATUS is compared without regard to case and surrounding space;
//     ID_CODIGO is zero when it is one or more '0' digits ("0", "00").
//   - A Fault anywhere in the answer wins over an exec_rsp in the same
//     document.
//   - An HTTP status outside 2xx does not hide the carrier's own answer: an
//     exec_rsp with STATUS=ERROR or a non-zero ID_CODIGO is an *Error
//     (upstream.Rejected) in any HTTP status. A body that is not an exec_rsp
//     keeps the HTTP error (*TransportError, ErrBadStatus). An exec_rsp saying
//     SUCCESS, or not deciding, under a non-2xx status is ErrBadStatus too:
//     the two layers disagree, so the top-up is reconciled rather than
//     counted. Result.Exchange.HTTPStatus always has the status.
//   - The exec_rsp may come bare or inside a SOAP envelope; UTF-8 and
//     ISO-8859-1 are accepted; answers over MaxAnswerSize (1 MiB) or nested
//     deeper than 64 elements are malformed.
//   - sre_topupd_76186 carries exactly the five elements of the
//     specification, no credentials: the SPR authenticates it by source IP
//     and, when configured, the OAuth2 bearer token. sre_consulta_inventario,
//     whose request the specification does not show, carries the
//     credentials like sre_consulta_recarga.
//   - The inventory answer is the usual status elements followed by one
//     run of OFFERID, DESCRIPCION, CANTIDAD per offer (InventoryItem);
//     CANTIDAD must be a non-negative integer.
//   - Result.ResultCode and Result.Diagnostic hold the exec_rsp result and
//     diagnostic attributes; for a fault, the faultcode and "SOAP fault
//     <code>: <string>"; for a transport error, Diagnostic is the error
//     text. They map to the record's carrier_result_code and
//     carrier_diagnostic.
//   - Topup requires EXTERNALOPERATION to be RECARGA_DATOS or RECARGA_PINES
//     and QUANTITY >= 1, and every field non-empty; the subscriber number
//     pattern is left to the caller and the carrier.
//   - The default HTTP client keeps up to 32 idle connections to the SPR and
//     does not follow redirects: a redirected POST is ErrBadStatus.
package carrier
