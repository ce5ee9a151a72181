package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/platform/integrations/internal/storage"
)

// Application environments (APP_ENV).
const (
	EnvDevelopment = "development"
	EnvProduction  = "production"
)

// Development defaults of the secrets. They let `make run` work with nothing configured and are
// refused with APP_ENV=production, even when set explicitly.
const (
	DevJWTSecret              = "dev-secret-change-me"
	DevActionTokenSecret      = "dev-action-secret-change-me"
	DevCreditsystemServiceKey = "dev-creditsystem-service-key"
	DevTopupServiceKey        = "dev-topup-service-key"
	// DevOTPKey seals the customer's OTP in development (consumption.DevOTPKey).
	DevOTPKey = "dev-otp-key-change-me"
	// DevOTPBypass is the OTP bypass code of the creditsystem fake (creditsystemtest.DevOTPBypass),
	// which development uses when CREDITSYSTEM_OTP_BYPASS is empty; production refuses it.
	DevOTPBypass = "123456"
)

// Defaults that differ per service.
const (
	DefaultCreditPort     = 3005
	DefaultTopupPort      = 3004
	DefaultCreditDatabase = "./data/credit.db"
	DefaultTopupDatabase  = "./data/topup.db"
	DefaultBodyLimit      = 1 << 20
)

// Names of the upstreams as returned by Fakes.
const (
	UpstreamCreditsystem = "creditsystem"
	UpstreamERP          = "erp"
	UpstreamCarrier      = "carrier"
	UpstreamSMTP         = "smtp"
)

// Common is the configuration both services share.
type Common struct {
	// AppEnv is EnvDevelopment (default) or EnvProduction.
	AppEnv string `env:"APP_ENV" envDefault:"development"`
	// Port is the HTTP port (3005 credit, 3004 top-up).
	Port int `env:"PORT"`
	// DatabaseURL is a postgres:// URL or a SQLite path; when DATABASE_URL is empty it is the
	// service's embedded SQLite file under ./data/. A Secret because a URL may carry a password.
	DatabaseURL Secret `env:"DATABASE_URL"`
	// JWTSecret verifies HS256 user tokens when JWTJWKSURL is empty.
	JWTSecret Secret `env:"JWT_SECRET" envDefault:"dev-secret-change-me"`
	// JWTJWKSURL, when set, verifies user tokens against this JWK Set instead of JWTSecret.
	JWTJWKSURL string `env:"JWT_JWKS_URL"`
	// LogLevel is debug, info (default), warn or error.
	LogLevel slog.Level `env:"LOG_LEVEL" envDefault:"info"`
	// BodyLimit is the largest accepted request body in bytes (default 1 MiB).
	BodyLimit int `env:"BODY_LIMIT" envDefault:"1048576"`
	// RequestTimeout bounds the database work of a request before its upstream call (seconds,
	// default 10, well under a client's timeout and the upstreams' 30 s): past it the request
	// fails with nothing sent, and on PostgreSQL no statement runs or waits for a lock longer.
	RequestTimeout time.Duration `env:"REQUEST_TIMEOUT" envDefault:"10"`
	// DatabaseMaxConns is the PostgreSQL pool size of the service (default 16). SQLite always
	// has one connection (storage.Open).
	DatabaseMaxConns int `env:"DATABASE_MAX_CONNS" envDefault:"16"`
	// DebugPprof serves net/http/pprof under /debug/pprof/ (development only).
	DebugPprof bool `env:"DEBUG_PPROF"`
	// CORSAllowedOrigins are the origins a browser may call the API from (comma-separated, e.g.
	// http://localhost:5173); empty turns CORS off; "*" allows any origin and is refused in
	// production.
	CORSAllowedOrigins []string `env:"CORS_ALLOWED_ORIGINS" envSeparator:","`
}

// Production reports whether APP_ENV is production.
func (c *Common) Production() bool { return c.AppEnv == EnvProduction }

// Development reports whether APP_ENV is development.
func (c *Common) Development() bool { return c.AppEnv == EnvDevelopment }

// UsesJWKS reports whether user tokens are verified against JWT_JWKS_URL rather than JWT_SECRET.
func (c *Common) UsesJWKS() bool { return c.JWTJWKSURL != "" }

// Addr is the listen address for Port on every interface.
func (c *Common) Addr() string { return ":" + strconv.Itoa(c.Port) }

// LogValue implements slog.LogValuer without any secret.
func (c *Common) LogValue() slog.Value {
	jwt := slog.String("jwt_secret", describeSecret(c.JWTSecret, DevJWTSecret))
	if c.UsesJWKS() {
		jwt = slog.String("jwt_jwks_url", redactURL(c.JWTJWKSURL))
	}
	return slog.GroupValue(
		slog.String("app_env", c.AppEnv),
		slog.Int("port", c.Port),
		slog.String("database", redactURL(c.DatabaseURL.Reveal())),
		jwt,
		slog.String("log_level", c.LogLevel.String()),
		slog.Int("body_limit", c.BodyLimit),
		slog.Duration("request_timeout", c.RequestTimeout),
		slog.Int("database_max_conns", c.DatabaseMaxConns),
		slog.Bool("debug_pprof", c.DebugPprof),
		slog.String("cors_allowed_origins", strings.Join(c.CORSAllowedOrigins, ",")),
	)
}

func (c *Common) validate(p *problems) {
	switch c.AppEnv {
	case EnvDevelopment, EnvProduction:
	default:
		p.add("APP_ENV", "must be development or production")
	}
	if c.Port < 1 || c.Port > 65535 {
		p.add("PORT", "must be a port number between 1 and 65535")
	}
	if c.BodyLimit < 1 {
		p.add("BODY_LIMIT", "must be a positive number of bytes")
	}
	p.positiveDuration("REQUEST_TIMEOUT", c.RequestTimeout)
	if c.DatabaseMaxConns < 1 || c.DatabaseMaxConns > 1000 {
		p.add("DATABASE_MAX_CONNS", "must be a number of connections between 1 and 1000")
	}
	if c.DebugPprof && c.Production() {
		p.add("DEBUG_PPROF", "must not be true in production")
	}
	origins := c.CORSAllowedOrigins[:0]
	for _, o := range c.CORSAllowedOrigins {
		if o = strings.TrimRight(strings.TrimSpace(o), "/"); o != "" {
			origins = append(origins, o)
		}
	}
	c.CORSAllowedOrigins = origins
	for _, o := range c.CORSAllowedOrigins {
		if o == "*" {
			if c.Production() {
				p.add("CORS_ALLOWED_ORIGINS", "must list origins, not *, in production")
			} else if len(c.CORSAllowedOrigins) > 1 {
				p.add("CORS_ALLOWED_ORIGINS", "* stands alone: it allows every origin")
			}
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" || u.User != nil ||
			u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.Contains(u.Host, "*") || strings.ContainsAny(o, "?#") {
			p.add("CORS_ALLOWED_ORIGINS", "must be a comma-separated list of origins (scheme and host, e.g. https://dashboard.example.com)")
			break
		}
	}
	if storage.CheckURL(c.DatabaseURL.Reveal()) != nil {
		p.add("DATABASE_URL", "must be a postgres:// or postgresql:// URL or a SQLite file path")
	}
	p.url("JWT_JWKS_URL", c.JWTJWKSURL)
	if c.Production() && !c.UsesJWKS() {
		p.secret("JWT_SECRET", c.JWTSecret, DevJWTSecret)
	}
}

// Problem is one invalid setting.
type Problem struct {
	// Var is the environment variable, e.g. "JWT_SECRET".
	Var string
	// Reason says what is wrong; it never contains the value.
	Reason string
}

// Error lists every invalid setting found; callers reach it with errors.As.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Var + " " + p.Reason
	}
	return "invalid configuration: " + strings.Join(parts, "; ")
}

// Has reports whether the named variable is among the problems.
func (e *Error) Has(name string) bool {
	for _, p := range e.Problems {
		if p.Var == name {
			return true
		}
	}
	return false
}

type problems struct {
	production bool
	list       []Problem
}

// add records a problem; only the first one per variable, so a value that does not parse is not
// also reported as out of range.
func (p *problems) add(name, reason string) {
	for _, q := range p.list {
		if q.Var == name {
			return
		}
	}
	p.list = append(p.list, Problem{Var: name, Reason: reason})
}

// url checks an optional URL setting: when set it must be absolute http(s).
func (p *problems) url(name, raw string) {
	if raw == "" {
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.add(name, "must be an absolute http or https URL")
	}
}

// requiredURL checks a URL that production cannot do without.
func (p *problems) requiredURL(name, raw string) {
	if raw == "" && p.production {
		p.add(name, "must be set in production")
		return
	}
	p.url(name, raw)
}

// secret checks a secret that production needs: set, and not the development default.
func (p *problems) secret(name string, s Secret, devDefault string) {
	switch {
	case strings.TrimSpace(s.Reveal()) == "":
		p.add(name, "must be set in production")
	case devDefault != "" && s.Reveal() == devDefault:
		p.add(name, "must not be the development default in production")
	}
}

func (p *problems) required(name, v string) {
	if strings.TrimSpace(v) == "" && p.production {
		p.add(name, "must be set in production")
	}
}

func (p *problems) positiveDuration(name string, d time.Duration) {
	if d <= 0 {
		p.add(name, "must be a positive number of seconds")
	}
}

func (p *problems) maxLen(name, v string, n int) {
	if len([]rune(v)) > n {
		p.add(name, fmt.Sprintf("must be at most %d characters long", n))
	}
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &Error{Problems: p.list}
}

// Environ returns the process environment as the map Parse* functions take.
func Environ() map[string]string {
	m := make(map[string]string)
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// parseSeconds reads CREDITSYSTEM_TIMEOUT and friends: a number of seconds ("30", "1.5") or, for
// convenience, a Go duration ("1500ms").
func parseSeconds(v string) (any, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(f * float64(time.Second)), nil
	}
	return time.ParseDuration(v)
}

// parseGroups fills each group from environ and turns parse failures into problems naming the
// variable, never the value. Groups are parsed one at a time because env reports a failure by Go
// field name, which is unique only within a group.
func parseGroups(environ map[string]string, p *problems, groups ...any) {
	opts := env.Options{
		Environment: environ,
		FuncMap:     map[reflect.Type]env.ParserFunc{reflect.TypeOf(time.Duration(0)): parseSeconds},
	}
	for _, g := range groups {
		err := env.ParseWithOptions(g, opts)
		if err == nil {
			continue
		}
		var agg env.AggregateError
		if !errors.As(err, &agg) {
			p.add("environment", "cannot be read")
			continue
		}
		t := reflect.TypeOf(g).Elem()
		for _, e := range agg.Errors {
			var pe env.ParseError
			if !errors.As(e, &pe) {
				p.add("environment", "cannot be read")
				continue
			}
			name := pe.Name
			if f, ok := t.FieldByName(pe.Name); ok {
				name, _, _ = strings.Cut(f.Tag.Get("env"), ",")
			}
			p.add(name, "has an invalid value: must be "+expected(pe.Type))
		}
	}
}

func expected(t reflect.Type) string {
	switch {
	case t == reflect.TypeOf(time.Duration(0)):
		return "a number of seconds"
	case t == reflect.TypeOf(slog.Level(0)):
		return "debug, info, warn or error"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	default:
		return "valid for " + t.String()
	}
}

func lookupBool(environ map[string]string, name string, p *problems) *bool {
	v, ok := environ[name]
	if !ok || strings.TrimSpace(v) == "" {
		return nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		p.add(name, "has an invalid value: must be true or false")
		return nil
	}
	return &b
}

// redactURL hides the password of a URL's user info; anything that does not parse as a URL with a
// scheme (a SQLite path) is returned as is.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.Contains(raw, "@") {
			return redacted
		}
		return raw
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	q := u.Query()
	for k := range q {
		if strings.Contains(strings.ToLower(k), "password") || strings.Contains(strings.ToLower(k), "secret") {
			q.Set(k, "xxxxx")
		}
	}
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	return u.String()
}
