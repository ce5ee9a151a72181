package config

import (
	"log/slog"
)

// redacted is what a set Secret prints as, whatever the verb or encoder.
const redacted = "[REDACTED]"

// Secret holds a password, key or token read from the environment. Every way of printing it
// (fmt verbs, %#v, JSON, text marshalling, slog) shows "[REDACTED]" (or "" when empty), so a
// configuration struct can be logged or wrapped into an error without leaking; the clear value is
// reached only through [Secret.Reveal], which makes every use easy to find.
type Secret string

// Reveal returns the clear value. Pass it straight to the library that needs it.
func (s Secret) Reveal() string { return string(s) }

// IsSet reports whether the secret is non-empty.
func (s Secret) IsSet() bool { return s != "" }

// String implements fmt.Stringer without the value.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString implements fmt.GoStringer so %#v does not print the value either.
func (s Secret) GoString() string { return `config.Secret("` + s.String() + `")` }

// MarshalText keeps the value out of JSON and any other text encoding.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads the value (used by caarlos0/env).
func (s *Secret) UnmarshalText(b []byte) error {
	*s = Secret(b)
	return nil
}

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// describeSecret tells an operator whether a secret is usable without printing it.
func describeSecret(s Secret, devDefault string) string {
	switch {
	case s == "":
		return "unset"
	case devDefault != "" && string(s) == devDefault:
		return "development default"
	default:
		return "set"
	}
}
