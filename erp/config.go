package erp

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"
)

// Defaults applied by New to the zero fields of a Config.
const (
	// DefaultTimeout is ERP_TIMEOUT when it is not set.
	DefaultTimeout = 30 * time.Second
	// DefaultLookupPath is the ERP's external client query. The specification does not
	// give it, so it is configurable (ERP_LOOKUP_PATH).
	DefaultLookupPath = "/erpapi/consulta-externa/clientes"
	// DefaultClientsPath is the ERP clients endpoint named by the specification.
	DefaultClientsPath = "/erpapi/clientes"
	// DefaultAPIKeyHeader carries Config.APIKey when APIKeyHeader is empty.
	DefaultAPIKeyHeader = "X-API-Key"
	// DefaultMaxResponseBytes bounds what is read from one ERP answer.
	DefaultMaxResponseBytes = 4 << 20
)

// Config locates the ERP. The services fill it from the environment; the variable each
// field comes from is given beside it.
type Config struct {
	// BaseURL is the ERP's scheme, host and optional path prefix (ERP_URL). Required.
	// It must not carry credentials, a query or a fragment: credentials go in APIKey,
	// where they are never logged.
	BaseURL string
	// Timeout bounds every call, body included (ERP_TIMEOUT, in seconds; default 30 s).
	Timeout time.Duration
	// LookupPath is the external client query (ERP_LOOKUP_PATH; default DefaultLookupPath).
	LookupPath string
	// ClientsPath is the create/update endpoint (ERP_CLIENTS_PATH; default DefaultClientsPath).
	ClientsPath string
	// PaymentsPath is the payments hand-over endpoint (ERP_PAYMENTS_PATH; default
	// DefaultPaymentsPath).
	PaymentsPath string
	// APIKey, when set, is sent in APIKeyHeader on every call (ERP_API_KEY). Secret: it is
	// redacted from String, LogValue and every error.
	APIKey string
	// APIKeyHeader names the header carrying APIKey (ERP_API_KEY_HEADER; default
	// DefaultAPIKeyHeader). "Authorization" sends the key as is, so include any scheme
	// ("Bearer ...") in APIKey.
	APIKeyHeader string
}

const redacted = "[REDACTED]"

// withDefaults validates c and fills its zero fields. Error messages never echo BaseURL:
// a malformed URL may be malformed precisely because someone pasted a secret into it.
func (c Config) withDefaults() (Config, error) {
	if c.BaseURL == "" {
		return c, errors.New("erp: config: BaseURL (ERP_URL) is required")
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, errors.New("erp: config: BaseURL (ERP_URL) must be an absolute http or https URL")
	}
	if u.User != nil {
		return c, errors.New("erp: config: BaseURL (ERP_URL) must not carry credentials; use APIKey (ERP_API_KEY)")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return c, errors.New("erp: config: BaseURL (ERP_URL) must not have a query or fragment")
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	switch {
	case c.Timeout < 0:
		return c, fmt.Errorf("erp: config: Timeout (ERP_TIMEOUT) must be positive, got %s", c.Timeout)
	case c.Timeout == 0:
		c.Timeout = DefaultTimeout
	}
	if c.LookupPath, err = cleanPath("LookupPath (ERP_LOOKUP_PATH)", c.LookupPath, DefaultLookupPath); err != nil {
		return c, err
	}
	if c.ClientsPath, err = cleanPath("ClientsPath (ERP_CLIENTS_PATH)", c.ClientsPath, DefaultClientsPath); err != nil {
		return c, err
	}
	if c.PaymentsPath, err = cleanPath("PaymentsPath (ERP_PAYMENTS_PATH)", c.PaymentsPath, DefaultPaymentsPath); err != nil {
		return c, err
	}
	if c.APIKeyHeader == "" {
		c.APIKeyHeader = DefaultAPIKeyHeader
	}
	if strings.ContainsAny(c.APIKey, "\r\n") {
		return c, errors.New("erp: config: APIKey (ERP_API_KEY) must not contain line breaks")
	}
	return c, nil
}

func cleanPath(name, p, def string) (string, error) {
	if p == "" {
		return def, nil
	}
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?#") {
		return "", fmt.Errorf("erp: config: %s must start with / and have no query", name)
	}
	return p, nil
}

// URL is BaseURL joined with path, the address calls go to.
func (c Config) url(path string) string { return c.BaseURL + path }

// String describes c with APIKey redacted, so a logged Config leaks nothing.
func (c Config) String() string {
	return fmt.Sprintf("erp.Config{BaseURL:%q Timeout:%s LookupPath:%q ClientsPath:%q PaymentsPath:%q APIKeyHeader:%q APIKey:%s}",
		c.BaseURL, c.Timeout, c.LookupPath, c.ClientsPath, c.PaymentsPath, c.APIKeyHeader, c.redactedKey())
}

// GoString keeps %#v from printing APIKey.
func (c Config) GoString() string { return c.String() }

// LogValue keeps slog from printing APIKey.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", c.BaseURL),
		slog.Duration("timeout", c.Timeout),
		slog.String("lookup_path", c.LookupPath),
		slog.String("clients_path", c.ClientsPath),
		slog.String("payments_path", c.PaymentsPath),
		slog.String("api_key_header", c.APIKeyHeader),
		slog.String("api_key", c.redactedKey()),
	)
}

func (c Config) redactedKey() string {
	if c.APIKey == "" {
		return `""`
	}
	return redacted
}
