package config

import (
	"log/slog"
	"strings"
	"time"
)

// Credit is the configuration of services/credit.
type Credit struct {
	Common       `env:"-"`    // groups are parsed one by one, see parseGroups
	Creditsystem Creditsystem `env:"-"`
	ERP          ERP          `env:"-"`
}

// Creditsystem configures the direct-credit SOAP system and the key it uses to call us.
type Creditsystem struct {
	// ServiceKey is the key of `Authorization: ServiceKey <key>`.
	ServiceKey Secret `env:"CREDITSYSTEM_SERVICE_KEY" envDefault:"dev-creditsystem-service-key"`
	// CarteraURL and CentralURL are the two WCF endpoints; both empty in development = fake.
	CarteraURL string `env:"CREDITSYSTEM_CARTERA_URL"`
	CentralURL string `env:"CREDITSYSTEM_CENTRAL_URL"`
	// SOAPNamespace is the target namespace of the WCF contracts.
	SOAPNamespace string `env:"CREDITSYSTEM_SOAP_NAMESPACE" envDefault:"http://tempuri.org/"`
	// Usuario (cUsuario, text 10), CodigoEmpresa (cCodigoEmpresa, text 6) and Terminal
	// (cTerminal, text 15) are injected into every upstream request.
	Usuario       string `env:"CREDITSYSTEM_USUARIO"`
	CodigoEmpresa string `env:"CREDITSYSTEM_CODIGO_EMPRESA" envDefault:"000598"`
	Terminal      string `env:"CREDITSYSTEM_TERMINAL"`
	// Timeout bounds every SOAP call (CREDITSYSTEM_TIMEOUT, seconds, default 30).
	Timeout time.Duration `env:"CREDITSYSTEM_TIMEOUT" envDefault:"30"`
	// OTPKey seals the customer's OTP while the service keeps it, between /otp and the
	// confirmation (CREDIT_OTP_KEY; every instance needs the same; production refuses the
	// development default).
	OTPKey Secret `env:"CREDIT_OTP_KEY" envDefault:"dev-otp-key-change-me"`
	// ReconcileInterval is the time between passes that reverse authorizations the creditsystem
	// granted but the service could not record (CREDIT_RECONCILE_INTERVAL, seconds, default
	// 60; 0 turns them off).
	ReconcileInterval time.Duration `env:"CREDIT_RECONCILE_INTERVAL" envDefault:"60"`
	// OTPBypass is the fixed OTP sent as cCodigoOtp when a request carries no otp (translation
	// rule 2). Production requires it and refuses DevOTPBypass; in development an empty value
	// means the fake's code.
	OTPBypass Secret `env:"CREDITSYSTEM_OTP_BYPASS"`
}

// ERP configures the ERP JSON API.
type ERP struct {
	// URL is the ERP base URL; empty in development = fake.
	URL string `env:"ERP_URL"`
	// Timeout bounds every ERP call (ERP_TIMEOUT, seconds, default 30).
	Timeout time.Duration `env:"ERP_TIMEOUT" envDefault:"30"`
	// LookupPath is the ERP's external client query, which the specification does not name
	// (ERP_LOOKUP_PATH, default erp.DefaultLookupPath).
	LookupPath string `env:"ERP_LOOKUP_PATH" envDefault:"/erpapi/consulta-externa/clientes"`
	// ClientsPath is the create/update endpoint (ERP_CLIENTS_PATH, default /erpapi/clientes).
	ClientsPath string `env:"ERP_CLIENTS_PATH" envDefault:"/erpapi/clientes"`
	// PaymentsPath receives the payments hand-over (ERP_PAYMENTS_PATH, default /erpapi/pagos).
	PaymentsPath string `env:"ERP_PAYMENTS_PATH" envDefault:"/erpapi/pagos"`
	// APIKey, when set, is sent in APIKeyHeader on every ERP call (ERP_API_KEY).
	APIKey Secret `env:"ERP_API_KEY"`
	// APIKeyHeader carries APIKey (ERP_API_KEY_HEADER, default X-API-Key).
	APIKeyHeader string `env:"ERP_API_KEY_HEADER" envDefault:"X-API-Key"`
}

// Development values of the creditsystem identity, used only when APP_ENV=development leaves them
// empty (the fake accepts anything; production must set them).
const (
	DevCreditsystemUsuario  = "PLATFORM"
	DevCreditsystemTerminal = "PLATFORM"
)

// LoadCredit reads the credit service configuration from the process environment.
func LoadCredit() (*Credit, error) { return ParseCredit(Environ()) }

// ParseCredit reads the credit service configuration from environ (name -> value) and validates
// it; a *Error lists every invalid setting by name.
func ParseCredit(environ map[string]string) (*Credit, error) {
	c := &Credit{Common: Common{Port: DefaultCreditPort}}
	p := &problems{}
	parseGroups(environ, p, &c.Common, &c.Creditsystem, &c.ERP)
	c.Common.normalize(DefaultCreditDatabase)
	p.production = c.Production()
	c.Common.validate(p)
	c.validate(p)
	if err := p.err(); err != nil {
		return nil, err
	}
	if c.Development() {
		if c.Creditsystem.Usuario == "" {
			c.Creditsystem.Usuario = DevCreditsystemUsuario
		}
		if c.Creditsystem.Terminal == "" {
			c.Creditsystem.Terminal = DevCreditsystemTerminal
		}
	}
	return c, nil
}

func (c *Credit) validate(p *problems) {
	cs := &c.Creditsystem
	p.requiredURL("CREDITSYSTEM_CARTERA_URL", cs.CarteraURL)
	p.requiredURL("CREDITSYSTEM_CENTRAL_URL", cs.CentralURL)
	if !p.production && (cs.CarteraURL == "") != (cs.CentralURL == "") {
		// Half a real creditsystem and half a fake would split one customer across two systems.
		p.add("CREDITSYSTEM_CENTRAL_URL", "must be set together with CREDITSYSTEM_CARTERA_URL (set both or neither)")
	}
	if strings.TrimSpace(cs.SOAPNamespace) == "" {
		p.add("CREDITSYSTEM_SOAP_NAMESPACE", "must not be empty")
	}
	p.required("CREDITSYSTEM_USUARIO", cs.Usuario)
	p.maxLen("CREDITSYSTEM_USUARIO", cs.Usuario, 10)
	if strings.TrimSpace(cs.CodigoEmpresa) == "" {
		p.add("CREDITSYSTEM_CODIGO_EMPRESA", "must not be empty")
	}
	p.maxLen("CREDITSYSTEM_CODIGO_EMPRESA", cs.CodigoEmpresa, 6)
	p.required("CREDITSYSTEM_TERMINAL", cs.Terminal)
	p.maxLen("CREDITSYSTEM_TERMINAL", cs.Terminal, 15)
	p.positiveDuration("CREDITSYSTEM_TIMEOUT", cs.Timeout)
	if cs.ReconcileInterval < 0 {
		p.add("CREDIT_RECONCILE_INTERVAL", "must be a number of seconds, 0 or more")
	}
	if p.production {
		p.secret("CREDITSYSTEM_SERVICE_KEY", cs.ServiceKey, DevCreditsystemServiceKey)
		p.secret("CREDITSYSTEM_OTP_BYPASS", cs.OTPBypass, DevOTPBypass)
		p.secret("CREDIT_OTP_KEY", cs.OTPKey, DevOTPKey)
	}
	p.requiredURL("ERP_URL", c.ERP.URL)
	p.positiveDuration("ERP_TIMEOUT", c.ERP.Timeout)
	for name, path := range map[string]string{"ERP_LOOKUP_PATH": c.ERP.LookupPath, "ERP_CLIENTS_PATH": c.ERP.ClientsPath, "ERP_PAYMENTS_PATH": c.ERP.PaymentsPath} {
		if !strings.HasPrefix(path, "/") {
			p.add(name, "must be a path starting with /")
		}
	}
}

// CreditsystemFake reports whether the creditsystem runs against the in-process fake
// (development with no CREDITSYSTEM_CARTERA_URL / CREDITSYSTEM_CENTRAL_URL).
func (c *Credit) CreditsystemFake() bool {
	return !c.Production() && c.Creditsystem.CarteraURL == "" && c.Creditsystem.CentralURL == ""
}

// ERPFake reports whether the ERP runs against the in-process fake (development, no ERP_URL).
func (c *Credit) ERPFake() bool { return !c.Production() && c.ERP.URL == "" }

// Fakes lists the upstreams that run against built-in fakes, for the start-up log.
func (c *Credit) Fakes() []string {
	var f []string
	if c.CreditsystemFake() {
		f = append(f, UpstreamCreditsystem)
	}
	if c.ERPFake() {
		f = append(f, UpstreamERP)
	}
	return f
}

// LogValue implements slog.LogValuer; secrets show only as set/unset/development default.
func (c *Credit) LogValue() slog.Value {
	cs := &c.Creditsystem
	return slog.GroupValue(
		slog.Any("common", c.Common.LogValue()),
		slog.Group("creditsystem",
			slog.String("service_key", describeSecret(cs.ServiceKey, DevCreditsystemServiceKey)),
			slog.String("cartera_url", orFake(redactURL(cs.CarteraURL))),
			slog.String("central_url", orFake(redactURL(cs.CentralURL))),
			slog.String("soap_namespace", cs.SOAPNamespace),
			slog.String("usuario", cs.Usuario),
			slog.String("codigo_empresa", cs.CodigoEmpresa),
			slog.String("terminal", cs.Terminal),
			slog.Duration("timeout", cs.Timeout),
			slog.String("otp_bypass", describeSecret(cs.OTPBypass, DevOTPBypass)),
			slog.String("otp_key", describeSecret(cs.OTPKey, DevOTPKey)),
			slog.Duration("reconcile_interval", cs.ReconcileInterval),
		),
		slog.Group("erp",
			slog.String("url", orFake(redactURL(c.ERP.URL))),
			slog.Duration("timeout", c.ERP.Timeout),
			slog.String("lookup_path", c.ERP.LookupPath),
			slog.String("clients_path", c.ERP.ClientsPath),
			slog.String("payments_path", c.ERP.PaymentsPath),
			slog.String("api_key", describeSecret(c.ERP.APIKey, "")),
		),
	)
}

func orFake(u string) string {
	if u == "" {
		return "(fake)"
	}
	return u
}

// normalize applies what env tags cannot express: per-service database default, tolerant APP_ENV.
func (c *Common) normalize(defaultDatabase string) {
	c.AppEnv = strings.ToLower(strings.TrimSpace(c.AppEnv))
	if strings.TrimSpace(c.DatabaseURL.Reveal()) == "" {
		c.DatabaseURL = Secret(defaultDatabase)
	}
}
