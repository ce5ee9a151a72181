package carrier

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/platform/integrations/carrier/internal/umsprot"
	"github.com/platform/integrations/internal/sdkerr"
	"github.com/platform/integrations/upstream"
)

// MaxAnswerSize bounds how much of an answer is read. SPR answers are a few
// hundred bytes; anything past this is treated as malformed so that a broken
// or hostile endpoint cannot exhaust memory.
const MaxAnswerSize = 1 << 20

// OperationOAuth2Token is what OperationFromContext reports for the token
// requests of the OAuth2 client-credentials grant.
const OperationOAuth2Token = "oauth2_token"

const minScrubbed = 4

// Client calls the carrier's SPR. It is safe for concurrent use.
type Client struct {
	cfg     Config
	hc      *http.Client
	timeout time.Duration
	log     *slog.Logger
	secrets []string // clear and XML-escaped forms of the secrets, to scrub
}

// New validates cfg and the options and returns a client. It does not
// contact the SPR or the token endpoint.
func New(cfg Config, opts ...Option) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		if opt == nil {
			continue // a nil Option is ignored (documented on Option)
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	c := &Client{cfg: cfg, timeout: cfg.timeout(), log: o.logger, hc: o.httpClient}
	if c.hc == nil {
		c.hc = defaultHTTPClient()
	}
	if cfg.OAuth2 != nil {
		c.hc = withOAuth2(c.hc, cfg.OAuth2, c.timeout)
	}
	for _, s := range []string{cfg.Password, oauthSecret(cfg.OAuth2)} {
		// Answers are searched for the secrets in case the SPR echoes one.
		// A secret shorter than minScrubbed would mangle ordinary words of
		// every answer and protects nothing; PASSWORD in the request is
		// masked whatever its length.
		if len(s) < minScrubbed {
			continue
		}
		c.secrets = append(c.secrets, s)
		var b strings.Builder
		_ = xml.EscapeText(&b, []byte(s))
		if e := b.String(); e != s {
			c.secrets = append(c.secrets, e)
		}
	}
	return c, nil
}

func oauthSecret(o *OAuth2Config) string {
	if o == nil {
		return ""
	}
	return o.ClientSecret
}

// defaultHTTPClient keeps enough idle connections for a busy service and
// refuses redirects: a redirected money-moving POST is a misconfiguration to
// surface, not to follow.
func defaultHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 32
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// withOAuth2 puts a cached client-credentials token on every request.
// clientcredentials.Config.TokenSource already wraps its source in
// oauth2.ReuseTokenSource, so the token is fetched once and again only when
// it is about to expire, and concurrent calls wait for one fetch.
func withOAuth2(hc *http.Client, o *OAuth2Config, timeout time.Duration) *http.Client {
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	// The token fetch does not run under a call's context, so it gets its
	// own deadline through the client timeout.
	tokenClient := *hc
	if tokenClient.Timeout == 0 || tokenClient.Timeout > timeout {
		tokenClient.Timeout = timeout
	}
	ctx := context.WithValue(context.Background(), operationKey{}, OperationOAuth2Token)
	ctx = context.WithValue(ctx, oauth2.HTTPClient, &tokenClient)
	cc := clientcredentials.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, TokenURL: o.TokenURL, Scopes: o.Scopes}
	return &http.Client{
		Transport:     &oauth2.Transport{Source: notSentOnFailure{cc.TokenSource(ctx)}, Base: base},
		CheckRedirect: hc.CheckRedirect,
		Jar:           hc.Jar,
		Timeout:       hc.Timeout,
	}
}

// notSentOnFailure marks a token that could not be obtained: oauth2.Transport
// asks for it before it sends the request, so the request never left.
type notSentOnFailure struct{ oauth2.TokenSource }

func (s notSentOnFailure) Token() (*oauth2.Token, error) {
	t, err := s.TokenSource.Token()
	if err != nil {
		return nil, sdkerr.NotSent(err)
	}
	return t, nil
}

type operationKey struct{}

// OperationFromContext returns the carrier function name (for example
// sre_topupd_76186) that the client stores in the context of every request
// it sends, so that a RoundTripper injected with WithHTTPClient can label
// metrics. Token requests of the OAuth2 grant report OperationOAuth2Token.
// The context of a Topup, QueryRecharge or Inventory request also carries
// what the call came to once the answer is interpreted (STATUS=ERROR
// included): read it with upstream.OnResult.
func OperationFromContext(ctx context.Context) (string, bool) {
	op, ok := ctx.Value(operationKey{}).(string)
	return op, ok
}

// call sends one exec_req and interprets the answer. It always returns a
// non-nil Result holding the audit Exchange.
func (c *Client) call(ctx context.Context, fn, externalID string, data []umsprot.Data) (*Result, *umsprot.Response, error) {
	start := time.Now()
	res := &Result{Exchange: Exchange{Function: fn}}
	rsp, err := c.exchange(ctx, fn, data, res)
	res.Exchange.Duration = time.Since(start)
	if IsTransport(err) {
		// The diagnostic attribute of a half-usable answer is still in
		// Exchange.Response; what the operator needs here is why the call
		// did not count.
		res.Diagnostic = c.scrub(err.Error())
	}
	c.logCall(ctx, fn, externalID, res, err)
	return res, rsp, err
}

func (c *Client) exchange(ctx context.Context, fn string, data []umsprot.Data, res *Result) (*umsprot.Response, error) {
	wire, err := umsprot.MarshalRequest(umsprot.Request{Function: fn, Data: data})
	if err != nil {
		return nil, &TransportError{Op: fn, Err: sdkerr.NotSent(fmt.Errorf("encoding the request: %w", err))}
	}
	res.Exchange.Request = wire
	if masked, ok := maskPassword(data); ok {
		if res.Exchange.Request, err = umsprot.MarshalRequest(umsprot.Request{Function: fn, Data: masked}); err != nil {
			return nil, &TransportError{Op: fn, Err: sdkerr.NotSent(fmt.Errorf("encoding the request: %w", err))}
		}
	}

	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	ctx = context.WithValue(ctx, operationKey{}, fn)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL, bytes.NewReader(wire))
	if err != nil {
		return nil, &TransportError{Op: fn, Err: sdkerr.NotSent(err)}
	}
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	req.Header.Set("Accept", "text/xml, application/xml")

	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, &TransportError{Op: fn, Err: withDeadline(ctx, sdkerr.RedactURLs(err))}
	}
	defer resp.Body.Close()
	res.Exchange.HTTPStatus = resp.StatusCode
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerSize+1))
	tooLarge := len(body) > MaxAnswerSize
	if tooLarge {
		body = body[:MaxAnswerSize]
	}
	res.Exchange.Response = c.scrubBytes(body)
	if err != nil {
		return nil, &TransportError{Op: fn, HTTPStatus: resp.StatusCode, Err: fmt.Errorf("reading the answer: %w", withDeadline(ctx, err))}
	}
	if tooLarge {
		return nil, &TransportError{Op: fn, HTTPStatus: resp.StatusCode, Err: fmt.Errorf("%w: larger than %d bytes", ErrMalformedAnswer, MaxAnswerSize)}
	}
	return interpret(fn, resp.StatusCode, body, res, c.scrub)
}

// withDeadline makes err satisfy errors.Is(err, context.DeadlineExceeded)
// when the call's deadline has passed, even if the layer below reported it in
// its own words (an injected RoundTripper or body that returns its own error
// when the context ends). Any other end of the context (a cancellation) is
// wrapped likewise, so errors.Is(err, context.Canceled) holds.
func withDeadline(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w", cerr, err)
	}
	return err
}

// maskPassword returns a copy of data with every PASSWORD value masked, and
// whether there was one.
func maskPassword(data []umsprot.Data) ([]umsprot.Data, bool) {
	var out []umsprot.Data
	for i, d := range data {
		if d.Name != "PASSWORD" {
			continue
		}
		if out == nil {
			out = append([]umsprot.Data(nil), data...)
		}
		out[i].Value = mask
	}
	return out, out != nil
}

// interpret applies the specification's success criterion to an answer:
// a SOAP Fault (in any HTTP status) is a *FaultError; an unreadable document
// is a *TransportError (ErrBadStatus outside 2xx, ErrMalformedAnswer
// otherwise); STATUS=ERROR or a non-zero ID_CODIGO is an *Error, whatever the
// HTTP status, since the carrier's own result code says the top-up did not
// happen; success needs STATUS=SUCCESS and ID_CODIGO=0 (for the inventory,
// which moves nothing, STATUS=SUCCESS alone is enough) in a 2xx answer.
// Anything else leaves the outcome unknown and is a *TransportError, so that
// the caller reconciles rather than guesses.
func interpret(fn string, httpStatus int, body []byte, res *Result, scrub func(string) string) (*umsprot.Response, error) {
	ans, derr := umsprot.DecodeAnswer(body)
	if derr == nil && ans.Fault != nil {
		f := &FaultError{Op: fn, Code: scrub(ans.Fault.Code), String: scrub(ans.Fault.String), HTTPStatus: httpStatus}
		res.ResultCode = f.Code
		res.Diagnostic = "SOAP fault " + f.Code + ": " + f.String
		return nil, f
	}
	ok := httpStatus >= 200 && httpStatus <= 299
	if derr != nil {
		if !ok {
			// Not an exec_rsp: an error page of the SPR or of a proxy in front of it.
			return nil, &TransportError{Op: fn, HTTPStatus: httpStatus, Err: ErrBadStatus}
		}
		return nil, &TransportError{Op: fn, HTTPStatus: httpStatus, Err: fmt.Errorf("%w: %s", ErrMalformedAnswer, scrub(derr.Error()))}
	}
	rsp := ans.Response
	res.ResultCode = scrub(strings.TrimSpace(rsp.Result))
	res.Diagnostic = scrub(strings.TrimSpace(rsp.Diagnostic))

	var err error
	field := func(name string) (string, bool) {
		v, ok, ferr := single(rsp, name)
		if ferr != nil && err == nil {
			err = ferr
		}
		return scrub(v), ok
	}
	status, _ := field("STATUS")
	code, hasCode := field("ID_CODIGO")
	res.Status = status
	res.IDCodigo = code
	res.IDRecarga, _ = field("ID_RECARGA")
	res.Mensaje, _ = field("MENSAJE")
	res.SystemMessage, _ = field("SYSTEMMESSAGE")
	if err != nil {
		if !ok {
			return nil, &TransportError{Op: fn, HTTPStatus: httpStatus, Err: fmt.Errorf("%w: %w: %s", ErrBadStatus, ErrMalformedAnswer, scrub(err.Error()))}
		}
		return nil, &TransportError{Op: fn, HTTPStatus: httpStatus, Err: fmt.Errorf("%w: %s", ErrMalformedAnswer, scrub(err.Error()))}
	}

	switch {
	case strings.EqualFold(status, StatusError) || (hasCode && !isZeroCode(code)):
		return rsp, &Error{Op: fn, Status: status, Code: code, Message: res.Mensaje, SystemMessage: res.SystemMessage}
	case !ok:
		// A success, or an undecided answer, under an HTTP error status: the
		// two layers disagree, so the outcome is unknown and is reconciled
		// (QueryRecharge) rather than taken as a success.
		return rsp, &TransportError{Op: fn, HTTPStatus: httpStatus,
			Err: fmt.Errorf("%w: exec_rsp with STATUS %q and ID_CODIGO %q", ErrBadStatus, status, code)}
	case strings.EqualFold(status, StatusSuccess) && hasCode:
		return rsp, nil
	case strings.EqualFold(status, StatusSuccess) && fn == FunctionQueryInventory:
		// The specification shows no inventory answer; ID_CODIGO belongs to the top-up's
		// success criterion. A stock listing moves nothing, so STATUS alone is enough here.
		return rsp, nil
	default:
		return rsp, &TransportError{Op: fn, HTTPStatus: httpStatus,
			Err: fmt.Errorf("%w: STATUS %q and ID_CODIGO %q do not decide the outcome", ErrMalformedAnswer, status, code)}
	}
}

// single returns the trimmed value of a data element that must not appear
// twice with different values: an answer saying both SUCCESS and ERROR is
// not one to act on.
func single(rsp *umsprot.Response, name string) (string, bool, error) {
	var (
		val   string
		found bool
	)
	for _, d := range rsp.Data {
		if d.Name != name {
			continue
		}
		v := strings.TrimSpace(d.Value)
		if found && v != val {
			return "", false, fmt.Errorf("data %s appears with values %q and %q", name, val, v)
		}
		val, found = v, true
	}
	return val, found, nil
}

// isZeroCode reports whether an ID_CODIGO is the number zero ("0", "00").
func isZeroCode(code string) bool {
	if code == "" {
		return false
	}
	for _, r := range code {
		if r != '0' {
			return false
		}
	}
	return true
}

func (c *Client) scrub(s string) string {
	for _, secret := range c.secrets {
		s = strings.ReplaceAll(s, secret, mask)
	}
	return s
}

func (c *Client) scrubBytes(b []byte) []byte {
	out := bytes.Clone(b)
	for _, secret := range c.secrets {
		out = bytes.ReplaceAll(out, []byte(secret), []byte(mask))
	}
	return out
}

// logKind is the kind attribute of a call's log line (see WithLogger). Every
// error call returns is an upstream.Error, so its kind is never 0.
func logKind(err error) string {
	if err == nil {
		return "ok"
	}
	return upstream.KindOf(err).String()
}

func (c *Client) logCall(ctx context.Context, fn, externalID string, res *Result, err error) {
	if c.log == nil {
		return
	}
	attrs := []slog.Attr{
		slog.String("function", fn),
		slog.Int("http_status", res.Exchange.HTTPStatus),
		slog.Duration("duration", res.Exchange.Duration),
		slog.String("kind", logKind(err)),
	}
	if externalID != "" {
		attrs = append(attrs, slog.String("external_transaction_id", externalID))
	}
	level := slog.LevelInfo
	if err != nil {
		level = slog.LevelWarn
		attrs = append(attrs, slog.String("error", c.scrub(err.Error())))
	}
	c.log.LogAttrs(ctx, level, "carrier call", attrs...)
}
