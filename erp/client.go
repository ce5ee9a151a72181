package erp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/platform/integrations/internal/sdkerr"
	"net/http"
	"strings"

	"github.com/go-resty/resty/v2"
)

// Client calls the ERP. It is safe for concurrent use; build one per process with New.
type Client struct {
	cfg  Config
	http *resty.Client
}

// Option configures a Client. Options validate their argument and make New fail. A nil
// Option is ignored, so that a caller can pass an optional one without a branch.
type Option func(*options) error

type options struct {
	httpClient *http.Client
}

// WithHTTPClient makes the Client send through hc: an httpmock MockTransport in tests, a
// metrics or tracing RoundTripper in production. hc is copied, never modified. Config.Timeout
// still bounds every call; hc.Timeout, when set, applies as well.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) error {
		if hc == nil {
			return errors.New("erp: WithHTTPClient: nil *http.Client")
		}
		o.httpClient = hc
		return nil
	}
}

// New validates cfg, applies the defaults documented on Config and returns a Client.
func New(cfg Config, opts ...Option) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
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
	var rc *resty.Client
	if o.httpClient != nil {
		// resty installs a transport and cookie jar on the client it is given; a copy keeps
		// the caller's client untouched.
		hc := *o.httpClient
		rc = resty.NewWithClient(&hc)
	} else {
		// resty's own transport keeps GOMAXPROCS+1 idle connections per host: under more
		// concurrent callers than that, every call past them opened a new TCP connection.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 32
		rc = resty.NewWithClient(&http.Client{Transport: tr})
	}
	// No retries: a create that timed out may have been applied, and repeating it is the
	// caller's decision. No logging from resty: requests carry the API key.
	// A redirected POST would come back as a GET without its body; the 3xx is reported
	// as an Error instead.
	rc.SetRedirectPolicy(resty.RedirectPolicyFunc(func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}))
	rc.SetRetryCount(0).
		SetLogger(discardLogger{}).
		SetDisableWarn(true).
		SetDebug(false).
		SetResponseBodyLimit(DefaultMaxResponseBytes).
		SetHeader("Accept", "application/json").
		SetHeader("User-Agent", "platform-integrations-erp")
	if cfg.APIKey != "" {
		rc.SetHeader(cfg.APIKeyHeader, cfg.APIKey)
	}
	return &Client{cfg: cfg, http: rc}, nil
}

// Config returns the effective configuration, defaults applied (APIKey included: it is
// redacted only when printed).
func (c *Client) Config() Config { return c.cfg }

type opKey struct{}

// OperationFromContext returns the operation name (OpLookupClient, OpSyncClient,
// OpHandOverPayment) that the Client puts in the context of every outgoing *http.Request, so
// that an injected RoundTripper can label its metrics or spans. The same context carries what
// the call came to once the answer is interpreted (error_api included): read it with
// upstream.OnResult.
func OperationFromContext(ctx context.Context) (string, bool) {
	op, ok := ctx.Value(opKey{}).(string)
	return op, ok
}

// envelope is what every ERP answer carries besides its own fields.
type envelope struct {
	ErrorAPI flexBool `json:"error_api"`
	Mensaje  string   `json:"mensaje"`
	Message  string   `json:"message"`
}

func (e envelope) message() string {
	if e.Mensaje != "" {
		return e.Mensaje
	}
	return e.Message
}

// post sends body to path under op's name and deadline, with the extra headers hdr (may be
// nil), and returns the raw 2xx answer and its status after checking error_api. Every failure
// comes back as *Error or *TransportError.
func (c *Client) post(ctx context.Context, op, path string, body []byte, hdr map[string]string) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	ctx = context.WithValue(ctx, opKey{}, op)

	resp, err := c.http.R().
		SetContext(ctx).
		SetHeader("Content-Type", "application/json").
		SetHeaders(hdr).
		SetBody(body).
		Post(c.cfg.url(path))
	if err != nil {
		return nil, 0, c.transportError(ctx, op, resp, err)
	}
	raw := c.redact(resp.Body())
	status := resp.StatusCode()
	if status < 200 || status > 299 {
		var env envelope
		_ = json.Unmarshal(raw, &env) // a non-JSON error page still is an Error
		msg := c.redactString(env.message())
		if msg == "" {
			msg = http.StatusText(status)
		}
		return nil, status, &Error{Op: op, HTTPStatus: status, Message: msg, Body: raw}
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, status, undecodable(op, status, err)
	}
	if env.ErrorAPI {
		msg := c.redactString(env.message())
		if msg == "" {
			msg = "error_api without mensaje"
		}
		return nil, status, &Error{Op: op, HTTPStatus: status, Message: msg, Body: raw}
	}
	return raw, status, nil
}

// transportError wraps err with op, and with the status of the answer when one arrived
// (resty returns it with an oversized body). When the call's deadline passed, the cause is
// made to satisfy errors.Is(err, context.DeadlineExceeded) even if the layer below reported
// it as something else (an injected RoundTripper may return its own error when the context
// ends).
func (c *Client) transportError(ctx context.Context, op string, resp *resty.Response, err error) error {
	err = sdkerr.RedactURLs(err)
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w: %w", cerr, err)
	}
	if c.cfg.APIKey != "" && strings.Contains(err.Error(), c.cfg.APIKey) {
		err = &redactedError{msg: strings.ReplaceAll(err.Error(), c.cfg.APIKey, redacted), err: err}
	}
	status := 0
	if resp != nil && resp.RawResponse != nil {
		status = resp.StatusCode()
	}
	return &TransportError{Op: op, HTTPStatus: status, Err: err}
}

func (c *Client) redact(b []byte) []byte {
	if c.cfg.APIKey == "" || !bytes.Contains(b, []byte(c.cfg.APIKey)) {
		return b
	}
	return bytes.ReplaceAll(b, []byte(c.cfg.APIKey), []byte(redacted))
}

func (c *Client) redactString(s string) string {
	if c.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.cfg.APIKey, redacted)
}

// redactedError keeps the chain (errors.Is still works) but prints a redacted text.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// flexBool reads a JSON boolean or the ERP's 0/1 convention (as in booleano_n).
type flexBool bool

func (b *flexBool) UnmarshalJSON(data []byte) error {
	switch string(bytes.TrimSpace(data)) {
	case "true", "1", `"1"`, `"true"`:
		*b = true
	case "false", "0", `"0"`, `"false"`, "null", `""`:
		*b = false
	default:
		return fmt.Errorf("not a boolean: %.40s", data)
	}
	return nil
}

type discardLogger struct{}

func (discardLogger) Errorf(string, ...any) {}
func (discardLogger) Warnf(string, ...any)  {}
func (discardLogger) Debugf(string, ...any) {}
