package carrier

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"
)

// DefaultTimeout is the SPR deadline of the specification, used when
// Config.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// mask replaces secrets in everything this package returns or logs.
const mask = "********"

// Config is what the client needs to reach the SPR. The services fill it
// from CARRIER_SPR_URL, CARRIER_USER, CARRIER_PASSWORD, CARRIER_COMPANY_ID,
// CARRIER_TIMEOUT (seconds) and CARRIER_OAUTH_TOKEN_URL / _CLIENT_ID /
// _CLIENT_SECRET.
type Config struct {
	// URL of the SPR endpoint every document is POSTed to (CARRIER_SPR_URL).
	URL string
	// User, Password and CompanyID go in sre_consulta_recarga and
	// sre_consulta_inventario as USERID, PASSWORD and COMPANYID.
	User      string
	Password  string
	CompanyID string
	// Timeout bounds each call, from sending the request to reading the
	// whole answer; the context's deadline wins when it is sooner. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// OAuth2, when set, adds a client-credentials bearer token to every call.
	OAuth2 *OAuth2Config
}

// OAuth2Config is the optional client-credentials grant in front of the SPR.
type OAuth2Config struct {
	TokenURL     string
	ClientID     string
	ClientSecret string
	Scopes       []string
}

// String masks the secrets so that a Config printed with %v or %+v, or
// logged, never shows them.
func (c Config) String() string {
	oauth := "none"
	if c.OAuth2 != nil {
		oauth = fmt.Sprintf("{TokenURL:%s ClientID:%s ClientSecret:%s}", c.OAuth2.TokenURL, c.OAuth2.ClientID, maskIfSet(c.OAuth2.ClientSecret))
	}
	return fmt.Sprintf("{URL:%s User:%s Password:%s CompanyID:%s Timeout:%s OAuth2:%s}",
		redactURL(c.URL), c.User, maskIfSet(c.Password), c.CompanyID, c.timeout(), oauth)
}

// GoString keeps %#v from bypassing String.
func (c Config) GoString() string { return "carrier.Config" + c.String() }

// LogValue keeps slog from printing the secrets.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

func maskIfSet(s string) string {
	if s == "" {
		return ""
	}
	return mask
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	return u.Redacted()
}

func (c Config) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

func (c Config) validate() error {
	if c.URL == "" {
		return errors.New("carrier: Config.URL is required")
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("carrier: Config.URL %q is not an http(s) URL", redactURL(c.URL))
	}
	if c.Timeout < 0 {
		return errors.New("carrier: Config.Timeout is negative")
	}
	if o := c.OAuth2; o != nil {
		if o.TokenURL == "" || o.ClientID == "" || o.ClientSecret == "" {
			return errors.New("carrier: Config.OAuth2 needs TokenURL, ClientID and ClientSecret")
		}
		if u, err := url.Parse(o.TokenURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New("carrier: Config.OAuth2.TokenURL is not an http(s) URL")
		}
	}
	return nil
}

// Option customises a Client. Options validate their argument: New fails
// on a bad one rather than a call failing later. A nil Option is ignored, so
// that a caller can pass an optional one (var opt carrier.Option; if ... {
// opt = carrier.WithLogger(l) }) without a branch.
type Option func(*options) error

type options struct {
	httpClient *http.Client
	logger     *slog.Logger
}

// WithHTTPClient sends every call through hc: its Transport (for metrics,
// proxies, or an in-process fake) and its CheckRedirect. Its Timeout, when
// set, applies on top of Config.Timeout. Without it the client uses its own
// keep-alive transport and does not follow redirects.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) error {
		if hc == nil {
			return errors.New("carrier: WithHTTPClient: nil *http.Client")
		}
		o.httpClient = hc
		return nil
	}
}

// WithLogger logs one line per call: function, external transaction id,
// HTTP status, duration and kind, which is "ok" for a success and otherwise
// the upstream.Kind of the error ("rejected", "fault", "outcome-unknown",
// "not-sent"), plus the error text. Never the XML, never a secret. A request
// refused before any call (ErrInvalidRequest) sends nothing and logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return errors.New("carrier: WithLogger: nil *slog.Logger")
		}
		o.logger = l
		return nil
	}
}
