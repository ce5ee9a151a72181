// Package config reads the services' configuration from environment variables (caarlos0/env),
// applies defaults and validates it.
//
// Construct with [LoadCredit] / [LoadTopup] (process environment) or [ParseCredit] /
// [ParseTopup] (a name -> value map, for tests). Both embed [Common]: APP_ENV, PORT,
// DATABASE_URL, JWT_SECRET / JWT_JWKS_URL, LOG_LEVEL, BODY_LIMIT. Timeouts are given in seconds
// (decimals allowed, "1.5"; a Go duration such as "1500ms" is accepted too) and exposed as
// time.Duration.
//
// # Errors
//
// Every invalid setting is collected into one [*Error] whose Problems name the variable and say
// what is wrong, never the value; callers reach it with errors.As and print it as is. Only the
// first problem per variable is reported.
//
// # Development and production
//
// APP_ENV=development (the default) works with nothing set: secrets have development defaults
// ([DevJWTSecret], [DevActionTokenSecret], [DevCreditsystemServiceKey], [DevTopupServiceKey]),
// DATABASE_URL defaults to the embedded SQLite file (./data/credit.db, ./data/topup.db), and
// every upstream whose URL is empty runs against its in-process fake: see [Credit.Fakes] and
// [Topup.Fakes], which the services log at start. CREDITSYSTEM_USUARIO and
// CREDITSYSTEM_TERMINAL default to "PLATFORM" in development only.
//
// APP_ENV=production refuses to start when:
//   - JWT_SECRET is empty or the development default (unless JWT_JWKS_URL is set);
//   - a service key or ACTION_TOKEN_SECRET is empty or its development default, or
//     ACTION_TOKEN_SECRET equals JWT_SECRET;
//   - an upstream URL is missing (CREDITSYSTEM_CARTERA_URL, CREDITSYSTEM_CENTRAL_URL, ERP_URL,
//     CARRIER_SPR_URL) or SMTP_HOST / SMTP_FROM are missing;
//   - CARRIER_MOCK_MODE=true;
//   - the upstream identity is missing (CREDITSYSTEM_USUARIO, CREDITSYSTEM_TERMINAL,
//     CARRIER_USER, CARRIER_PASSWORD, CARRIER_COMPANY_ID).
//
// Production does not require DATABASE_URL: a single instance on the SQLite file is allowed,
// though the daily limit and throttling only hold across instances on PostgreSQL.
//
// # Decisions where the specification is silent
//
//   - CARRIER_MOCK_MODE unset means "fake when CARRIER_SPR_URL is empty" in development and false
//     in production; CARRIER_MOCK_MODE=true in development uses the fake even with a URL;
//     CARRIER_MOCK_MODE=false without CARRIER_SPR_URL is an error.
//   - The creditsystem is one system: setting only one of CREDITSYSTEM_CARTERA_URL and
//     CREDITSYSTEM_CENTRAL_URL is an error, in every environment.
//   - With JWT_JWKS_URL set, tokens are verified against the JWK Set only and JWT_SECRET is unused.
//   - CREDITSYSTEM_SOAP_NAMESPACE defaults to "http://tempuri.org/" (the WCF default);
//     CREDITSYSTEM_CODIGO_EMPRESA (text 6), CREDITSYSTEM_USUARIO (text 10) and
//     CREDITSYSTEM_TERMINAL (text 15) are checked against the upstream field lengths.
//   - The carrier OAuth2 settings are all-or-nothing; SMTP_USERNAME requires SMTP_PASSWORD.
//   - SMTP_HOST empty in development = notifications go to an in-process fake.
//   - BODY_LIMIT (bytes, default 1 MiB) bounds request bodies; larger ones get 413.
//
// # Secrets
//
// Secrets are of type [Secret]: fmt, %#v, JSON and slog all print "[REDACTED]"; only
// [Secret.Reveal] gives the value. [Credit.LogValue] and [Topup.LogValue] describe secrets as
// "set", "unset" or "development default" and redact passwords inside URLs, so
// slog.Info("config", "config", cfg) is safe.
package config
