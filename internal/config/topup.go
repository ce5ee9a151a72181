package config

import (
	"log/slog"
	"net/mail"
	"regexp"
	"strings"
	"time"
)

// Topup is the configuration of services/topup.
type Topup struct {
	Common `env:"-"` // groups are parsed one by one, see parseGroups
	// ServiceKey is the `x-service-key` the workflow tool sends to the webhook.
	ServiceKey Secret `env:"TOPUP_SERVICE_KEY" envDefault:"dev-topup-service-key"`
	// ActionTokenSecret signs and verifies the single-use action tokens (HS256).
	ActionTokenSecret Secret `env:"ACTION_TOKEN_SECRET" envDefault:"dev-action-secret-change-me"`
	// OperationsEmail receives every notification (optional).
	OperationsEmail string   `env:"OPERATIONS_EMAIL"`
	Carrier         Carrier  `env:"-"`
	Recargas        Recargas `env:"-"`
	SMTP            SMTP     `env:"-"`
}

// Carrier configures the carrier's SPR.
type Carrier struct {
	// SPRURL is the SPR endpoint; empty in development = fake.
	SPRURL string `env:"CARRIER_SPR_URL"`
	// MockMode is CARRIER_MOCK_MODE resolved: when unset it is true in development without
	// CARRIER_SPR_URL and false otherwise. Production refuses true.
	MockMode bool `env:"-"`
	// User, Password and CompanyID go into the query function (USERID, PASSWORD, COMPANYID).
	User      string `env:"CARRIER_USER"`
	Password  Secret `env:"CARRIER_PASSWORD"`
	CompanyID string `env:"CARRIER_COMPANY_ID"`
	// Timeout bounds every SPR call (CARRIER_TIMEOUT, seconds, default 30).
	Timeout time.Duration `env:"CARRIER_TIMEOUT" envDefault:"30"`
	// OAuth2 client credentials, optional: all three or none.
	OAuthTokenURL     string `env:"CARRIER_OAUTH_TOKEN_URL"`
	OAuthClientID     string `env:"CARRIER_OAUTH_CLIENT_ID"`
	OAuthClientSecret Secret `env:"CARRIER_OAUTH_CLIENT_SECRET"`
}

// OAuthEnabled reports whether the OAuth2 client-credentials settings are configured.
func (c *Carrier) OAuthEnabled() bool { return c.OAuthTokenURL != "" }

// Recargas holds the top-up business settings.
type Recargas struct {
	// DailyLimit is the number of manual top-ups per user per calendar day (default 50).
	DailyLimit int `env:"RECARGAS_DAILY_LIMIT" envDefault:"50"`
	// DefaultCanton is the fallback 4-digit INEC canton code (default 1701).
	DefaultCanton string `env:"RECARGAS_DEFAULT_CANTON" envDefault:"1701"`
	// ProductsFile and Products replace the product mapping of the specification with JSON
	// (see topup.ParseProducts), from a file or inline; the file wins when both are set.
	ProductsFile string `env:"RECARGAS_PRODUCTS_FILE"`
	Products     string `env:"RECARGAS_PRODUCTS"`
	// ReconcileInterval is the time between reconciler passes (seconds, default 60); 0 turns
	// the reconciler off in this instance.
	ReconcileInterval time.Duration `env:"RECARGAS_RECONCILE_INTERVAL" envDefault:"60"`
	// ReconcilePendingAfter is how long a pending record waits before the reconciler counts it
	// as abandoned (seconds, default 300).
	ReconcilePendingAfter time.Duration `env:"RECARGAS_RECONCILE_PENDING_AFTER" envDefault:"300"`
	// ReconcileRetryAfter is how long an unavailable record rests between two looks (seconds,
	// default 60).
	ReconcileRetryAfter time.Duration `env:"RECARGAS_RECONCILE_RETRY_AFTER" envDefault:"60"`
	// ReconcileMaxRetries is how many times an unavailable top-up is sent again (default 3; 0
	// or -1: never).
	ReconcileMaxRetries int `env:"RECARGAS_RECONCILE_MAX_RETRIES" envDefault:"3"`
}

// ProductsSource names where the product mapping comes from: the file, "RECARGAS_PRODUCTS" or
// "default" (the specification's table).
func (r *Recargas) ProductsSource() string {
	switch {
	case r.ProductsFile != "":
		return r.ProductsFile
	case r.Products != "":
		return "RECARGAS_PRODUCTS"
	}
	return "default"
}

// SMTP configures the notification mail server; SMTP_HOST empty in development = fake.
type SMTP struct {
	Host     string `env:"SMTP_HOST"`
	Port     int    `env:"SMTP_PORT" envDefault:"587"`
	Username string `env:"SMTP_USERNAME"`
	Password Secret `env:"SMTP_PASSWORD"`
	From     string `env:"SMTP_FROM"`
	// Timeout bounds every SMTP exchange (connection, each command, the message); seconds.
	Timeout time.Duration `env:"SMTP_TIMEOUT" envDefault:"30"`
}

// DevSMTPFrom is the sender address of development e-mails when SMTP_FROM is unset.
const DevSMTPFrom = "recargas@localhost"

// FromAddress is SMTP_FROM, or DevSMTPFrom in development when it is unset.
func (s SMTP) FromAddress() string {
	if s.From == "" {
		return DevSMTPFrom
	}
	return s.From
}

var cantonPattern = regexp.MustCompile(`^[0-9]{4}$`)

// LoadTopup reads the top-up service configuration from the process environment.
func LoadTopup() (*Topup, error) { return ParseTopup(Environ()) }

// ParseTopup reads the top-up service configuration from environ (name -> value) and validates
// it; a *Error lists every invalid setting by name.
func ParseTopup(environ map[string]string) (*Topup, error) {
	t := &Topup{Common: Common{Port: DefaultTopupPort}}
	p := &problems{}
	parseGroups(environ, p, &t.Common, t, &t.Carrier, &t.Recargas, &t.SMTP)
	t.Common.normalize(DefaultTopupDatabase)
	p.production = t.Production()
	mock := lookupBool(environ, "CARRIER_MOCK_MODE", p)
	t.Common.validate(p)
	t.validate(p, mock)
	if err := p.err(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Topup) validate(p *problems, mock *bool) {
	c := &t.Carrier
	switch {
	case mock != nil && *mock && p.production:
		p.add("CARRIER_MOCK_MODE", "must not be true in production")
	case mock != nil && !*mock && c.SPRURL == "" && !p.production:
		p.add("CARRIER_SPR_URL", "must be set when CARRIER_MOCK_MODE=false")
	}
	if mock != nil {
		c.MockMode = *mock
	} else {
		c.MockMode = !p.production && c.SPRURL == ""
	}
	p.requiredURL("CARRIER_SPR_URL", c.SPRURL)
	p.required("CARRIER_USER", c.User)
	p.required("CARRIER_COMPANY_ID", c.CompanyID)
	if p.production {
		p.secret("CARRIER_PASSWORD", c.Password, "")
		p.secret("TOPUP_SERVICE_KEY", t.ServiceKey, DevTopupServiceKey)
		p.secret("ACTION_TOKEN_SECRET", t.ActionTokenSecret, DevActionTokenSecret)
		if t.ActionTokenSecret.IsSet() && t.ActionTokenSecret == t.JWTSecret && !t.UsesJWKS() {
			// One secret for both would let a user token pass as an action token's signature.
			p.add("ACTION_TOKEN_SECRET", "must differ from JWT_SECRET")
		}
	}
	p.positiveDuration("CARRIER_TIMEOUT", c.Timeout)
	oauthSet := 0
	for _, v := range []string{c.OAuthTokenURL, c.OAuthClientID, c.OAuthClientSecret.Reveal()} {
		if v != "" {
			oauthSet++
		}
	}
	if oauthSet != 0 && oauthSet != 3 {
		p.add("CARRIER_OAUTH_TOKEN_URL", "must be set together with CARRIER_OAUTH_CLIENT_ID and CARRIER_OAUTH_CLIENT_SECRET (all three or none)")
	}
	p.url("CARRIER_OAUTH_TOKEN_URL", c.OAuthTokenURL)

	if t.Recargas.DailyLimit < 1 {
		p.add("RECARGAS_DAILY_LIMIT", "must be at least 1")
	}
	r := &t.Recargas
	r.ProductsFile, r.Products = strings.TrimSpace(r.ProductsFile), strings.TrimSpace(r.Products)
	if r.ReconcileInterval < 0 {
		p.add("RECARGAS_RECONCILE_INTERVAL", "must be a number of seconds, 0 or more")
	}
	p.positiveDuration("RECARGAS_RECONCILE_PENDING_AFTER", r.ReconcilePendingAfter)
	if r.ReconcilePendingAfter > 0 && c.Timeout > 0 && r.ReconcilePendingAfter <= c.Timeout {
		// A pending record younger than the carrier timeout may still have its top-up in flight:
		// the reconciler would send it a second time while the first is on its way.
		p.add("RECARGAS_RECONCILE_PENDING_AFTER", "must be greater than CARRIER_TIMEOUT (a top-up still in flight would be sent again)")
	}
	p.positiveDuration("RECARGAS_RECONCILE_RETRY_AFTER", r.ReconcileRetryAfter)
	if r.ReconcileMaxRetries < -1 {
		p.add("RECARGAS_RECONCILE_MAX_RETRIES", "must be an integer, -1 or more")
	}
	if !cantonPattern.MatchString(t.Recargas.DefaultCanton) {
		p.add("RECARGAS_DEFAULT_CANTON", "must be a 4-digit INEC canton code")
	}
	if t.OperationsEmail != "" {
		if _, err := mail.ParseAddress(t.OperationsEmail); err != nil {
			p.add("OPERATIONS_EMAIL", "must be an e-mail address")
		}
	}

	s := &t.SMTP
	p.required("SMTP_HOST", s.Host)
	p.required("SMTP_FROM", s.From)
	if s.From != "" {
		if _, err := mail.ParseAddress(s.From); err != nil {
			p.add("SMTP_FROM", "must be an e-mail address")
		}
	}
	if s.Port < 1 || s.Port > 65535 {
		p.add("SMTP_PORT", "must be a port number between 1 and 65535")
	}
	p.positiveDuration("SMTP_TIMEOUT", s.Timeout)
	if s.Username != "" && !s.Password.IsSet() {
		p.add("SMTP_PASSWORD", "must be set when SMTP_USERNAME is set")
	}
	if strings.ContainsAny(s.Host, " /") {
		p.add("SMTP_HOST", "must be a host name without scheme or path")
	}
}

// CarrierFake reports whether the SPR runs against the in-process fake (CARRIER_MOCK_MODE).
func (t *Topup) CarrierFake() bool { return t.Carrier.MockMode }

// SMTPFake reports whether notifications go to the in-process fake mail sink (development, no
// SMTP_HOST).
func (t *Topup) SMTPFake() bool { return !t.Production() && t.SMTP.Host == "" }

// Fakes lists the upstreams that run against built-in fakes, for the start-up log.
func (t *Topup) Fakes() []string {
	var f []string
	if t.CarrierFake() {
		f = append(f, UpstreamCarrier)
	}
	if t.SMTPFake() {
		f = append(f, UpstreamSMTP)
	}
	return f
}

// LogValue implements slog.LogValuer; secrets show only as set/unset/development default.
func (t *Topup) LogValue() slog.Value {
	c := &t.Carrier
	return slog.GroupValue(
		slog.Any("common", t.Common.LogValue()),
		slog.String("service_key", describeSecret(t.ServiceKey, DevTopupServiceKey)),
		slog.String("action_token_secret", describeSecret(t.ActionTokenSecret, DevActionTokenSecret)),
		slog.String("operations_email", t.OperationsEmail),
		slog.Group("carrier",
			slog.String("spr_url", orFake(redactURL(c.SPRURL))),
			slog.Bool("mock_mode", c.MockMode),
			slog.String("user", c.User),
			slog.String("password", describeSecret(c.Password, "")),
			slog.String("company_id", c.CompanyID),
			slog.Duration("timeout", c.Timeout),
			slog.String("oauth_token_url", redactURL(c.OAuthTokenURL)),
			slog.String("oauth_client_id", c.OAuthClientID),
			slog.String("oauth_client_secret", describeSecret(c.OAuthClientSecret, "")),
		),
		slog.Group("recargas",
			slog.Int("daily_limit", t.Recargas.DailyLimit),
			slog.String("default_canton", t.Recargas.DefaultCanton),
			slog.String("products", t.Recargas.ProductsSource()),
			slog.Duration("reconcile_interval", t.Recargas.ReconcileInterval),
			slog.Duration("reconcile_pending_after", t.Recargas.ReconcilePendingAfter),
			slog.Duration("reconcile_retry_after", t.Recargas.ReconcileRetryAfter),
			slog.Int("reconcile_max_retries", t.Recargas.ReconcileMaxRetries),
		),
		slog.Group("smtp",
			slog.String("host", orFake(t.SMTP.Host)),
			slog.Int("port", t.SMTP.Port),
			slog.String("username", t.SMTP.Username),
			slog.String("password", describeSecret(t.SMTP.Password, "")),
			slog.String("from", t.SMTP.From),
		),
	)
}
