package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"log/slog"
	"maps"
	"strings"
	"testing"
	"time"
)

// Values that must never show up in an error or a log line.
const (
	secretJWT     = "jwt-secret-9f8e7d"
	secretAction  = "action-secret-6c5b4a"
	secretCSKey   = "cs-key-3a2b1c"
	secretTopKey  = "topup-key-0f1e2d"
	secretCarrier = "carrier-pass-7a8b9c"
	secretOAuth   = "oauth-secret-4d5e6f"
	secretSMTP    = "smtp-pass-1a2b3c"
	secretOTP     = "otp-bypass-5566"
	secretOTPKey  = "otp-key-7788"
	secretDBPass  = "db-pass-8899"
)

var allSecrets = []string{secretJWT, secretAction, secretCSKey, secretTopKey, secretCarrier, secretOAuth, secretSMTP, secretOTP, secretOTPKey, secretDBPass}

func prodCreditEnv() map[string]string {
	return map[string]string{
		"APP_ENV":                  "production",
		"DATABASE_URL":             "postgres://app:" + secretDBPass + "@db:5432/credit",
		"JWT_SECRET":               secretJWT,
		"CREDITSYSTEM_SERVICE_KEY": secretCSKey,
		"CREDITSYSTEM_CARTERA_URL": "https://cs.example/Cartera.svc",
		"CREDITSYSTEM_CENTRAL_URL": "https://cs.example/Central.svc",
		"CREDITSYSTEM_USUARIO":     "PLATUSER",
		"CREDITSYSTEM_TERMINAL":    "TERM01",
		"CREDITSYSTEM_OTP_BYPASS":  secretOTP,
		"CREDIT_OTP_KEY":           secretOTPKey,
		"ERP_URL":                  "https://erp.example",
	}
}

func prodTopupEnv() map[string]string {
	return map[string]string{
		"APP_ENV":                     "production",
		"DATABASE_URL":                "postgres://app:" + secretDBPass + "@db:5432/topup",
		"JWT_SECRET":                  secretJWT,
		"TOPUP_SERVICE_KEY":           secretTopKey,
		"ACTION_TOKEN_SECRET":         secretAction,
		"CARRIER_SPR_URL":             "https://spr.example/umsprot",
		"CARRIER_USER":                "platform",
		"CARRIER_PASSWORD":            secretCarrier,
		"CARRIER_COMPANY_ID":          "77",
		"CARRIER_OAUTH_TOKEN_URL":     "https://auth.example/token",
		"CARRIER_OAUTH_CLIENT_ID":     "client",
		"CARRIER_OAUTH_CLIENT_SECRET": secretOAuth,
		"SMTP_HOST":                   "smtp.example",
		"SMTP_USERNAME":               "mailer",
		"SMTP_PASSWORD":               secretSMTP,
		"SMTP_FROM":                   "recargas@example.com",
		"OPERATIONS_EMAIL":            "ops@example.com",
	}
}

func with(base map[string]string, kv ...string) map[string]string {
	m := maps.Clone(base)
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "<unset>" {
			delete(m, kv[i])
			continue
		}
		m[kv[i]] = kv[i+1]
	}
	return m
}

func assertNoSecrets(t *testing.T, s string) {
	t.Helper()
	for _, v := range allSecrets {
		if strings.Contains(s, v) {
			t.Errorf("output leaks secret %q: %s", v, s)
		}
	}
}

func TestCreditDevelopmentDefaults(t *testing.T) {
	c, err := ParseCredit(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"AppEnv", c.AppEnv, EnvDevelopment},
		{"Port", c.Port, 3005},
		{"Addr", c.Addr(), ":3005"},
		{"DatabaseURL", c.DatabaseURL.Reveal(), "./data/credit.db"},
		{"JWTSecret", c.JWTSecret.Reveal(), DevJWTSecret},
		{"LogLevel", c.LogLevel, slog.LevelInfo},
		{"BodyLimit", c.BodyLimit, 1 << 20},
		{"ServiceKey", c.Creditsystem.ServiceKey.Reveal(), DevCreditsystemServiceKey},
		{"CodigoEmpresa", c.Creditsystem.CodigoEmpresa, "000598"},
		{"SOAPNamespace", c.Creditsystem.SOAPNamespace, "http://tempuri.org/"},
		{"Usuario", c.Creditsystem.Usuario, DevCreditsystemUsuario},
		{"Terminal", c.Creditsystem.Terminal, DevCreditsystemTerminal},
		{"CreditsystemTimeout", c.Creditsystem.Timeout, 30 * time.Second},
		{"ERPTimeout", c.ERP.Timeout, 30 * time.Second},
		{"OTPBypass", c.Creditsystem.OTPBypass.IsSet(), false},
		{"Fakes", fmt.Sprint(c.Fakes()), "[creditsystem erp]"},
		{"UsesJWKS", c.UsesJWKS(), false},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestTopupDevelopmentDefaults(t *testing.T) {
	c, err := ParseTopup(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Port", c.Port, 3004},
		{"DatabaseURL", c.DatabaseURL.Reveal(), "./data/topup.db"},
		{"ServiceKey", c.ServiceKey.Reveal(), DevTopupServiceKey},
		{"ActionTokenSecret", c.ActionTokenSecret.Reveal(), DevActionTokenSecret},
		{"CarrierTimeout", c.Carrier.Timeout, 30 * time.Second},
		{"MockMode", c.Carrier.MockMode, true},
		{"DailyLimit", c.Recargas.DailyLimit, 50},
		{"DefaultCanton", c.Recargas.DefaultCanton, "1701"},
		{"SMTPPort", c.SMTP.Port, 587},
		{"SMTPTimeout", c.SMTP.Timeout, 30 * time.Second},
		{"SMTPFrom", c.SMTP.FromAddress(), DevSMTPFrom},
		{"OAuthEnabled", c.Carrier.OAuthEnabled(), false},
		{"Fakes", fmt.Sprint(c.Fakes()), "[carrier smtp]"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestOverrides(t *testing.T) {
	c, err := ParseCredit(map[string]string{
		"PORT": "8080", "CREDITSYSTEM_TIMEOUT": "2", "ERP_TIMEOUT": "1.5", "LOG_LEVEL": "debug",
		"DATABASE_URL": "postgres://localhost/x", "BODY_LIMIT": "2048",
		"CREDITSYSTEM_CARTERA_URL": "http://127.0.0.1:9000/c", "CREDITSYSTEM_CENTRAL_URL": "http://127.0.0.1:9000/x",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 8080 || c.Creditsystem.Timeout != 2*time.Second || c.ERP.Timeout != 1500*time.Millisecond ||
		c.LogLevel != slog.LevelDebug || c.DatabaseURL.Reveal() != "postgres://localhost/x" || c.BodyLimit != 2048 {
		t.Errorf("overrides not applied: %+v", c)
	}
	if got := fmt.Sprint(c.Fakes()); got != "[erp]" {
		t.Errorf("Fakes = %s, want [erp] (creditsystem URLs are set)", got)
	}

	tp, err := ParseTopup(map[string]string{"CARRIER_SPR_URL": "http://127.0.0.1:9/spr", "SMTP_HOST": "127.0.0.1", "CARRIER_TIMEOUT": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if tp.CarrierFake() || tp.SMTPFake() || len(tp.Fakes()) != 0 || tp.Carrier.Timeout != time.Second {
		t.Errorf("configured upstreams reported as fakes: %v, timeout %v", tp.Fakes(), tp.Carrier.Timeout)
	}
	tp, err = ParseTopup(map[string]string{"CARRIER_SPR_URL": "http://127.0.0.1:9/spr", "CARRIER_MOCK_MODE": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if !tp.CarrierFake() {
		t.Error("CARRIER_MOCK_MODE=true in development must use the fake even with a URL")
	}
}

func TestProductionValid(t *testing.T) {
	c, err := ParseCredit(prodCreditEnv())
	if err != nil {
		t.Fatalf("complete production credit config refused: %v", err)
	}
	if len(c.Fakes()) != 0 || c.Creditsystem.Usuario != "PLATUSER" {
		t.Errorf("production credit: fakes %v, usuario %q", c.Fakes(), c.Creditsystem.Usuario)
	}
	tp, err := ParseTopup(prodTopupEnv())
	if err != nil {
		t.Fatalf("complete production top-up config refused: %v", err)
	}
	if len(tp.Fakes()) != 0 || tp.Carrier.MockMode || !tp.Carrier.OAuthEnabled() {
		t.Errorf("production top-up: fakes %v, mock %v", tp.Fakes(), tp.Carrier.MockMode)
	}
	if c.DatabaseMaxConns != 16 || c.DebugPprof {
		t.Errorf("production credit: DATABASE_MAX_CONNS %d, DEBUG_PPROF %v; want 16 and false", c.DatabaseMaxConns, c.DebugPprof)
	}
	if tp, err := ParseTopup(with(prodTopupEnv(), "DATABASE_MAX_CONNS", "40")); err != nil || tp.DatabaseMaxConns != 40 {
		t.Errorf("DATABASE_MAX_CONNS=40: %v, %+v", err, tp)
	}
	if c, err := ParseCredit(with(prodCreditEnv(), "CORS_ALLOWED_ORIGINS", " https://dash.example.com/, http://localhost:5173 ,")); err != nil ||
		strings.Join(c.CORSAllowedOrigins, " ") != "https://dash.example.com http://localhost:5173" {
		t.Errorf("CORS_ALLOWED_ORIGINS: %v, %q", err, c.CORSAllowedOrigins)
	}
	if c, err := ParseTopup(map[string]string{"CORS_ALLOWED_ORIGINS": "*"}); err != nil || len(c.CORSAllowedOrigins) != 1 {
		t.Errorf("CORS_ALLOWED_ORIGINS=* in development: %v, %q", err, c.CORSAllowedOrigins)
	}
	// With a JWK Set the HS256 secret is unused, so its default is harmless.
	if _, err := ParseCredit(with(prodCreditEnv(), "JWT_SECRET", "<unset>", "JWT_JWKS_URL", "https://idp.example/jwks.json")); err != nil {
		t.Errorf("production with JWT_JWKS_URL refused: %v", err)
	}
}

func TestValidation(t *testing.T) {
	type loader func(map[string]string) error
	credit := func(m map[string]string) error { _, err := ParseCredit(m); return err }
	topup := func(m map[string]string) error { _, err := ParseTopup(m); return err }
	dev := map[string]string{}

	cases := []struct {
		name string
		load loader
		env  map[string]string
		want []string // variables that must be named
	}{
		{"unknown APP_ENV", credit, with(dev, "APP_ENV", "staging"), []string{"APP_ENV"}},
		{"PORT not a number", credit, with(dev, "PORT", "abc"), []string{"PORT"}},
		{"PORT out of range", topup, with(dev, "PORT", "70000"), []string{"PORT"}},
		{"timeout not a number", credit, with(dev, "CREDITSYSTEM_TIMEOUT", "soon"), []string{"CREDITSYSTEM_TIMEOUT"}},
		{"timeout zero", credit, with(dev, "ERP_TIMEOUT", "0"), []string{"ERP_TIMEOUT"}},
		{"carrier timeout negative", topup, with(dev, "CARRIER_TIMEOUT", "-1"), []string{"CARRIER_TIMEOUT"}},
		{"bad log level", credit, with(dev, "LOG_LEVEL", "loud"), []string{"LOG_LEVEL"}},
		{"bad body limit", credit, with(dev, "BODY_LIMIT", "0"), []string{"BODY_LIMIT"}},
		{"request timeout zero", topup, with(dev, "REQUEST_TIMEOUT", "0"), []string{"REQUEST_TIMEOUT"}},
		{"pool size zero", credit, with(dev, "DATABASE_MAX_CONNS", "0"), []string{"DATABASE_MAX_CONNS"}},
		{"SMTP timeout zero", topup, with(dev, "SMTP_TIMEOUT", "0"), []string{"SMTP_TIMEOUT"}},
		{"pool size not a number", topup, with(dev, "DATABASE_MAX_CONNS", "many"), []string{"DATABASE_MAX_CONNS"}},
		{"profiler in production", credit, with(prodCreditEnv(), "DEBUG_PPROF", "true"), []string{"DEBUG_PPROF"}},
		{"CORS any origin in production", credit, with(prodCreditEnv(), "CORS_ALLOWED_ORIGINS", "https://a.example.com,*"), []string{"CORS_ALLOWED_ORIGINS"}},
		{"CORS origin with a path", topup, with(dev, "CORS_ALLOWED_ORIGINS", "https://a.example.com/app"), []string{"CORS_ALLOWED_ORIGINS"}},
		{"CORS origin without a scheme", topup, with(dev, "CORS_ALLOWED_ORIGINS", "localhost:5173"), []string{"CORS_ALLOWED_ORIGINS"}},
		{"CORS * beside an origin", topup, with(dev, "CORS_ALLOWED_ORIGINS", "*,http://localhost:5173"), []string{"CORS_ALLOWED_ORIGINS"}},
		{"CORS origin with a fragment", credit, with(dev, "CORS_ALLOWED_ORIGINS", "https://a.example.com#x"), []string{"CORS_ALLOWED_ORIGINS"}},
		{"CORS origin with a wildcard host", credit, with(dev, "CORS_ALLOWED_ORIGINS", "https://*.example.com"), []string{"CORS_ALLOWED_ORIGINS"}},
		{"CORS origin with credentials", credit, with(dev, "CORS_ALLOWED_ORIGINS", "https://u:p@a.example.com"), []string{"CORS_ALLOWED_ORIGINS"}},
		{"credit reconciler interval negative", credit, with(dev, "CREDIT_RECONCILE_INTERVAL", "-1"), []string{"CREDIT_RECONCILE_INTERVAL"}},
		// The reconciler would resend a top-up still in flight: the message names both settings.
		{"pending-after equal to the carrier timeout", topup, with(with(dev, "CARRIER_TIMEOUT", "30"), "RECARGAS_RECONCILE_PENDING_AFTER", "30"),
			[]string{"RECARGAS_RECONCILE_PENDING_AFTER", "CARRIER_TIMEOUT"}},
		{"pending-after below the carrier timeout", topup, with(with(dev, "CARRIER_TIMEOUT", "45"), "RECARGAS_RECONCILE_PENDING_AFTER", "20"),
			[]string{"RECARGAS_RECONCILE_PENDING_AFTER", "CARRIER_TIMEOUT"}},
		{"bad JWKS URL", credit, with(dev, "JWT_JWKS_URL", "not a url"), []string{"JWT_JWKS_URL"}},
		{"only cartera URL", credit, with(dev, "CREDITSYSTEM_CARTERA_URL", "http://x/c"), []string{"CREDITSYSTEM_CENTRAL_URL"}},
		{"ERP URL without scheme", credit, with(dev, "ERP_URL", "erp.example"), []string{"ERP_URL"}},
		{"codigo empresa too long", credit, with(dev, "CREDITSYSTEM_CODIGO_EMPRESA", "1234567"), []string{"CREDITSYSTEM_CODIGO_EMPRESA"}},
		{"usuario too long", credit, with(dev, "CREDITSYSTEM_USUARIO", "ELEVENCHARS"), []string{"CREDITSYSTEM_USUARIO"}},
		{"daily limit zero", topup, with(dev, "RECARGAS_DAILY_LIMIT", "0"), []string{"RECARGAS_DAILY_LIMIT"}},
		{"daily limit not a number", topup, with(dev, "RECARGAS_DAILY_LIMIT", "many"), []string{"RECARGAS_DAILY_LIMIT"}},
		{"canton not 4 digits", topup, with(dev, "RECARGAS_DEFAULT_CANTON", "17"), []string{"RECARGAS_DEFAULT_CANTON"}},
		{"mock mode not a bool", topup, with(dev, "CARRIER_MOCK_MODE", "maybe"), []string{"CARRIER_MOCK_MODE"}},
		{"mock off without URL", topup, with(dev, "CARRIER_MOCK_MODE", "false"), []string{"CARRIER_SPR_URL"}},
		{"partial OAuth", topup, with(dev, "CARRIER_OAUTH_CLIENT_ID", "id"), []string{"CARRIER_OAUTH_TOKEN_URL"}},
		{"bad operations e-mail", topup, with(dev, "OPERATIONS_EMAIL", "ops"), []string{"OPERATIONS_EMAIL"}},
		{"SMTP user without password", topup, with(dev, "SMTP_USERNAME", "u"), []string{"SMTP_PASSWORD"}},
		{"SMTP port", topup, with(dev, "SMTP_PORT", "0"), []string{"SMTP_PORT"}},
		{"database URL of another engine", credit, with(dev, "DATABASE_URL", "mysql://app:hunter22@db/x"), []string{"DATABASE_URL"}},
		{"database URL with an upper-case scheme", credit, with(dev, "DATABASE_URL", "POSTGRES://app:hunter22@db/x"), []string{"DATABASE_URL"}},
		{"database URL with a misspelt scheme", topup, with(dev, "DATABASE_URL", "postgress://app:hunter22@db/x"), []string{"DATABASE_URL"}},
		{"database URL that does not parse", credit, with(dev, "DATABASE_URL", "postgres://app:hunter22@db:port/x"), []string{"DATABASE_URL"}},

		{"production credit, nothing set", credit, map[string]string{"APP_ENV": "production"}, []string{
			"JWT_SECRET", "CREDITSYSTEM_SERVICE_KEY", "CREDITSYSTEM_CARTERA_URL", "CREDITSYSTEM_CENTRAL_URL",
			"CREDITSYSTEM_USUARIO", "CREDITSYSTEM_TERMINAL", "CREDITSYSTEM_OTP_BYPASS", "CREDIT_OTP_KEY", "ERP_URL"}},
		{"production credit, OTP bypass unset", credit, with(prodCreditEnv(), "CREDITSYSTEM_OTP_BYPASS", "<unset>"), []string{"CREDITSYSTEM_OTP_BYPASS"}},
		{"production credit, OTP bypass of the fake", credit, with(prodCreditEnv(), "CREDITSYSTEM_OTP_BYPASS", DevOTPBypass), []string{"CREDITSYSTEM_OTP_BYPASS"}},
		{"production credit, development OTP key", credit, with(prodCreditEnv(), "CREDIT_OTP_KEY", DevOTPKey), []string{"CREDIT_OTP_KEY"}},
		{"production credit, default JWT secret", credit, with(prodCreditEnv(), "JWT_SECRET", DevJWTSecret), []string{"JWT_SECRET"}},
		{"production credit, empty JWT secret", credit, with(prodCreditEnv(), "JWT_SECRET", " "), []string{"JWT_SECRET"}},
		{"production credit, default service key", credit, with(prodCreditEnv(), "CREDITSYSTEM_SERVICE_KEY", DevCreditsystemServiceKey), []string{"CREDITSYSTEM_SERVICE_KEY"}},
		{"production credit, missing ERP URL", credit, with(prodCreditEnv(), "ERP_URL", "<unset>"), []string{"ERP_URL"}},
		{"production credit, missing central URL", credit, with(prodCreditEnv(), "CREDITSYSTEM_CENTRAL_URL", "<unset>"), []string{"CREDITSYSTEM_CENTRAL_URL"}},
		{"production top-up, nothing set", topup, map[string]string{"APP_ENV": "production"}, []string{
			"JWT_SECRET", "TOPUP_SERVICE_KEY", "ACTION_TOKEN_SECRET", "CARRIER_SPR_URL", "CARRIER_USER",
			"CARRIER_PASSWORD", "CARRIER_COMPANY_ID", "SMTP_HOST", "SMTP_FROM"}},
		{"production top-up, mock mode on", topup, with(prodTopupEnv(), "CARRIER_MOCK_MODE", "true"), []string{"CARRIER_MOCK_MODE"}},
		{"production top-up, default action secret", topup, with(prodTopupEnv(), "ACTION_TOKEN_SECRET", DevActionTokenSecret), []string{"ACTION_TOKEN_SECRET"}},
		{"production top-up, default service key", topup, with(prodTopupEnv(), "TOPUP_SERVICE_KEY", DevTopupServiceKey), []string{"TOPUP_SERVICE_KEY"}},
		{"production top-up, action secret equals JWT secret", topup, with(prodTopupEnv(), "ACTION_TOKEN_SECRET", secretJWT), []string{"ACTION_TOKEN_SECRET"}},
		{"production top-up, missing SPR URL", topup, with(prodTopupEnv(), "CARRIER_SPR_URL", "<unset>"), []string{"CARRIER_SPR_URL"}},
		{"production top-up, empty carrier password", topup, with(prodTopupEnv(), "CARRIER_PASSWORD", ""), []string{"CARRIER_PASSWORD"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.load(tc.env)
			var cerr *Error
			if !errors.As(err, &cerr) {
				t.Fatalf("want *config.Error, got %v", err)
			}
			named := 0
			for _, name := range tc.want {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("error does not name %s: %v", name, err)
				}
				if cerr.Has(name) {
					named++
				}
			}
			if named == 0 {
				t.Errorf("no problem is about %v: %v", tc.want, err)
			}
			if len(cerr.Problems) != named {
				t.Errorf("got %d problems, want %d: %v", len(cerr.Problems), len(tc.want), err)
			}
			assertNoSecrets(t, err.Error())
			for _, v := range tc.env {
				if len(v) > 3 && v != "production" && v != "true" && v != "false" && strings.Contains(err.Error(), v) {
					t.Errorf("error prints the value %q: %v", v, err)
				}
			}
		})
	}
}

func TestLogValueHidesSecrets(t *testing.T) {
	c, err := ParseCredit(prodCreditEnv())
	if err != nil {
		t.Fatal(err)
	}
	tp, err := ParseTopup(prodTopupEnv())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	log.Info("config", "credit", c, "topup", tp)
	out := buf.String()
	assertNoSecrets(t, out)
	for _, want := range []string{`"service_key":"set"`, `"jwt_secret":"set"`, "https://cs.example/Cartera.svc", "postgres://app:xxxxx@db:5432/credit"} {
		if !strings.Contains(out, want) {
			t.Errorf("log line lacks %s: %s", want, out)
		}
	}

	dev, _ := ParseTopup(map[string]string{})
	buf.Reset()
	log.Info("config", "topup", dev)
	if !strings.Contains(buf.String(), `"action_token_secret":"development default"`) || !strings.Contains(buf.String(), `"spr_url":"(fake)"`) {
		t.Errorf("development log line should say which secrets are defaults and which upstreams are fakes: %s", buf.String())
	}
}

func TestSecretNeverPrints(t *testing.T) {
	c, err := ParseTopup(prodTopupEnv())
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{
		fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), c.JWTSecret.String(), fmt.Sprintf("%v", c.JWTSecret),
		fmt.Sprintf("%q", c.Carrier.Password), fmt.Sprintf("%x", c.SMTP.Password), fmt.Sprint(c.ServiceKey),
		string(js), fmt.Errorf("wrapped: %v", c.ActionTokenSecret).Error(),
	} {
		assertNoSecrets(t, out)
	}
	if c.Carrier.Password.Reveal() != secretCarrier {
		t.Error("Reveal must return the clear value")
	}
	if Secret("").String() != "" || Secret("x").String() != "[REDACTED]" {
		t.Error("String must be empty for an unset secret and [REDACTED] for a set one")
	}
}

func TestRedactURL(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"password", "postgres://u:p4ss@h:5432/db?sslmode=disable", "postgres://u:xxxxx@h:5432/db?sslmode=disable"},
		{"password query", "postgres://h/db?password=p4ss", "postgres://h/db?password=xxxxx"},
		{"no password", "postgres://u@h/db", "postgres://u@h/db"},
		{"sqlite path", "./data/credit.db", "./data/credit.db"},
		{"empty", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := redactURL(tc.in); got != tc.want {
				t.Errorf("redactURL(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func ExampleParseTopup() {
	_, err := ParseTopup(map[string]string{
		"APP_ENV": "production", "JWT_SECRET": "s3cr3t-value", "CARRIER_MOCK_MODE": "true",
	})
	var cerr *Error
	if errors.As(err, &cerr) {
		for _, p := range cerr.Problems {
			fmt.Println(p.Var)
		}
	}
	// Output:
	// CARRIER_MOCK_MODE
	// CARRIER_SPR_URL
	// CARRIER_USER
	// CARRIER_COMPANY_ID
	// CARRIER_PASSWORD
	// TOPUP_SERVICE_KEY
	// ACTION_TOKEN_SECRET
	// SMTP_HOST
	// SMTP_FROM
}

func TestERPPathsAndKey(t *testing.T) {
	c, err := ParseCredit(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if c.ERP.LookupPath != "/erpapi/consulta-externa/clientes" || c.ERP.ClientsPath != "/erpapi/clientes" || c.ERP.APIKeyHeader != "X-API-Key" {
		t.Fatalf("ERP defaults = %+v", c.ERP)
	}
	c, err = ParseCredit(map[string]string{"ERP_LOOKUP_PATH": "/q", "ERP_CLIENTS_PATH": "/c", "ERP_API_KEY": "erp-key-123456"})
	if err != nil {
		t.Fatal(err)
	}
	if c.ERP.LookupPath != "/q" || c.ERP.ClientsPath != "/c" || c.ERP.APIKey.Reveal() != "erp-key-123456" {
		t.Fatalf("ERP overrides = %+v", c.ERP)
	}
	if strings.Contains(fmt.Sprint(c.LogValue()), "erp-key-123456") {
		t.Fatal("ERP_API_KEY printed by LogValue")
	}
	_, err = ParseCredit(map[string]string{"ERP_CLIENTS_PATH": "erpapi/clientes"})
	var cfgErr *Error
	if !errors.As(err, &cfgErr) || !cfgErr.Has("ERP_CLIENTS_PATH") {
		t.Fatalf("relative ERP_CLIENTS_PATH: err = %v, want a problem naming ERP_CLIENTS_PATH", err)
	}
}

func TestDevOTPBypassIsTheFakes(t *testing.T) {
	if DevOTPBypass != creditsystemtest.DevOTPBypass {
		t.Fatalf("config.DevOTPBypass %q, the creditsystem fake accepts %q", DevOTPBypass, creditsystemtest.DevOTPBypass)
	}
}
