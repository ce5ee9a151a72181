package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/internal/httpx"
)

// Scheme is a way a request authenticates.
type Scheme uint8

const (
	// Bearer is `Authorization: Bearer <user token>` (the dashboard).
	Bearer Scheme = iota + 1
	// ServiceKey is `Authorization: ServiceKey <key>` (the creditsystem on the client endpoints).
	ServiceKey
	// ServiceKeyHeader is `x-service-key: <key>` (the workflow tool on the top-up webhook).
	ServiceKeyHeader
)

func (s Scheme) String() string {
	switch s {
	case Bearer:
		return "Bearer"
	case ServiceKey:
		return "ServiceKey"
	case ServiceKeyHeader:
		return "x-service-key"
	}
	return "unknown"
}

// Origins of a request, Principal.Origin.
const (
	// OriginDashboard: a user token (credit: source_system "dashboard").
	OriginDashboard = "dashboard"
	// OriginCreditsystem: `Authorization: ServiceKey` (credit: source_system "CREDITSYSTEM").
	OriginCreditsystem = "CREDITSYSTEM"
	// OriginWorkflow: `x-service-key` (top-up: source "workflow-webhook").
	OriginWorkflow = "workflow-webhook"
)

// HeaderServiceKey is the header of the ServiceKeyHeader scheme.
const HeaderServiceKey = "X-Service-Key"

// Sentinel errors, all answered 401 except ErrForbidden (403).
var (
	ErrMissingCredentials = errors.New("auth: missing credentials")
	ErrSchemeNotAccepted  = errors.New("auth: authorization scheme not accepted on this endpoint")
	ErrInvalidServiceKey  = errors.New("auth: invalid service key")
	ErrForbidden          = errors.New("auth: missing permission")
)

// Principal is who made the request.
type Principal struct {
	Scheme Scheme
	// Claims of the user token; nil for a service key.
	Claims *Claims
	// Origin is OriginDashboard, OriginCreditsystem or OriginWorkflow.
	Origin string
}

// HasPermission reports whether the principal is a user holding perm. Service keys hold none.
func (p *Principal) HasPermission(perm string) bool {
	return p != nil && p.Claims != nil && p.Claims.HasPermission(perm)
}

// Subject is the user's sub, or "" for a service key.
func (p *Principal) Subject() string {
	if p == nil || p.Claims == nil {
		return ""
	}
	return p.Claims.Subject
}

// Caller names the authenticated caller of c for what is scoped to it (idempotency keys):
// "user:<sub>" for a user token, "service:<origin>" for a service key, "" without Require.
func Caller(c *fiber.Ctx) string {
	p := PrincipalFrom(c)
	switch {
	case p == nil:
		return ""
	case p.Claims != nil:
		return "user:" + p.Claims.Subject
	}
	return "service:" + p.Origin
}

const localsPrincipal = "auth.principal"

// PrincipalFrom returns the principal Require stored, or nil on a route without Require.
func PrincipalFrom(c *fiber.Ctx) *Principal {
	p, _ := c.Locals(localsPrincipal).(*Principal)
	return p
}

// Authenticator holds what Require checks credentials against. Build one per service at start-up.
type Authenticator struct {
	verifier   *Verifier
	serviceKey *[sha256.Size]byte
	headerKey  *[sha256.Size]byte
}

// AuthenticatorOption configures an Authenticator.
type AuthenticatorOption func(*Authenticator)

// WithServiceKey enables `Authorization: ServiceKey <key>`; an empty key leaves it disabled, so
// every such request gets 401.
func WithServiceKey(key string) AuthenticatorOption {
	return func(a *Authenticator) { a.serviceKey = hashKey(key) }
}

// WithHeaderKey enables `x-service-key: <key>`; an empty key leaves it disabled.
func WithHeaderKey(key string) AuthenticatorOption {
	return func(a *Authenticator) { a.headerKey = hashKey(key) }
}

func hashKey(key string) *[sha256.Size]byte {
	if key == "" {
		return nil
	}
	h := sha256.Sum256([]byte(key))
	return &h
}

// NewAuthenticator returns an Authenticator; v verifies Bearer tokens (nil: Bearer always 401).
func NewAuthenticator(v *Verifier, opts ...AuthenticatorOption) *Authenticator {
	a := &Authenticator{verifier: v}
	for _, o := range opts {
		o(a)
	}
	return a
}

// keyMatches compares in constant time; hashing first also hides the configured key's length.
func keyMatches(want *[sha256.Size]byte, got string) bool {
	if want == nil || got == "" {
		return false
	}
	h := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(want[:], h[:]) == 1
}

// Require authenticates the request with one of schemes, the ones this route accepts, and stores
// the Principal for PrincipalFrom. The Authorization header is used when its scheme is accepted,
// else x-service-key when accepted and present; the chosen credential must be valid (no fall
// back to another). Missing credentials, a scheme the route does not accept (a Bearer token on a
// ServiceKey-only route), a bad or expired token and a wrong key answer 401 in the envelope.
// It panics without schemes: a route with no way in is a wiring mistake.
func Require(a *Authenticator, schemes ...Scheme) fiber.Handler {
	if len(schemes) == 0 {
		panic("auth.Require: no scheme")
	}
	var bearer, serviceKey, header bool
	for _, s := range schemes {
		switch s {
		case Bearer:
			bearer = true
		case ServiceKey:
			serviceKey = true
		case ServiceKeyHeader:
			header = true
		default:
			panic("auth.Require: unknown scheme")
		}
	}
	challenge := ""
	switch {
	case bearer:
		challenge = "Bearer"
	case serviceKey:
		challenge = "ServiceKey"
	}
	deny := func(c *fiber.Ctx, msg string, err error) error {
		if challenge != "" {
			c.Set(fiber.HeaderWWWAuthenticate, challenge)
		}
		return httpx.WrapError(http.StatusUnauthorized, msg, err)
	}

	return func(c *fiber.Ctx) error {
		authz := strings.TrimSpace(c.Get(fiber.HeaderAuthorization))
		scheme, cred, _ := strings.Cut(authz, " ")
		cred = strings.TrimSpace(cred)
		var p *Principal
		switch {
		case bearer && strings.EqualFold(scheme, "Bearer"):
			if cred == "" || a.verifier == nil {
				return deny(c, "Invalid token", ErrInvalidToken)
			}
			claims, err := a.verifier.Verify(c.UserContext(), cred)
			if errors.Is(err, ErrTokenExpired) {
				return deny(c, "Token expired", err)
			}
			if err != nil {
				return deny(c, "Invalid token", err)
			}
			p = &Principal{Scheme: Bearer, Claims: claims, Origin: OriginDashboard}
		case serviceKey && strings.EqualFold(scheme, "ServiceKey"):
			if !keyMatches(a.serviceKey, cred) {
				return deny(c, "Invalid service key", ErrInvalidServiceKey)
			}
			p = &Principal{Scheme: ServiceKey, Origin: OriginCreditsystem}
		case header && c.Get(HeaderServiceKey) != "":
			if !keyMatches(a.headerKey, c.Get(HeaderServiceKey)) {
				return deny(c, "Invalid service key", ErrInvalidServiceKey)
			}
			p = &Principal{Scheme: ServiceKeyHeader, Origin: OriginWorkflow}
		case authz != "":
			return deny(c, "Authorization scheme not accepted on this endpoint", ErrSchemeNotAccepted)
		default:
			return deny(c, "Missing credentials", ErrMissingCredentials)
		}
		c.Locals(localsPrincipal, p)
		return c.Next()
	}
}

// RequirePermission answers 403 unless the principal (set by Require, which must run first) is a
// user holding perm; without a principal it answers 401.
func RequirePermission(perm string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p := PrincipalFrom(c)
		if p == nil {
			return httpx.WrapError(http.StatusUnauthorized, "Missing credentials", ErrMissingCredentials)
		}
		if !p.HasPermission(perm) {
			return httpx.WrapError(http.StatusForbidden, "Missing permission: "+perm, ErrForbidden)
		}
		return c.Next()
	}
}
