package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"
)

// Defaults of the validated-token cache.
const (
	DefaultCacheTTL  = 60 * time.Second
	DefaultCacheSize = 10000
)

// Errors of Verify; the middleware answers both with 401.
var (
	ErrInvalidToken = errors.New("auth: invalid token")
	ErrTokenExpired = errors.New("auth: token expired")
)

// Algorithms accepted with a JWK Set: asymmetric only, so a token signed with HS256 using the
// public key as the HMAC secret (algorithm confusion) is refused before any key is looked up.
var jwksMethods = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// Claims are the claims of a user token.
type Claims struct {
	Subject     string   `json:"sub"`
	Username    string   `json:"username"`
	Email       string   `json:"email"`
	Permissions []string `json:"permissions"`
	// ExpiresAt is exp; IssuedAt is iat (zero when absent).
	ExpiresAt time.Time `json:"-"`
	IssuedAt  time.Time `json:"-"`
}

// HasPermission reports whether perm is among the token's permissions.
func (c *Claims) HasPermission(perm string) bool { return slices.Contains(c.Permissions, perm) }

// userClaims is the wire form of Claims.
type userClaims struct {
	Username    string   `json:"username,omitempty"`
	Email       string   `json:"email,omitempty"`
	Permissions []string `json:"permissions"`
	jwt.RegisteredClaims
}

// SignUserToken signs c with HS256, for tests and services/devtoken. Subject and ExpiresAt are
// required.
func SignUserToken(secret []byte, c Claims) (string, error) {
	if len(secret) == 0 || c.Subject == "" || c.ExpiresAt.IsZero() {
		return "", errors.New("auth: SignUserToken needs a secret, a subject and an expiry")
	}
	wire := userClaims{
		Username:    c.Username,
		Email:       c.Email,
		Permissions: c.Permissions,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   c.Subject,
			ExpiresAt: jwt.NewNumericDate(c.ExpiresAt),
		},
	}
	if wire.Permissions == nil {
		wire.Permissions = []string{}
	}
	if !c.IssuedAt.IsZero() {
		wire.IssuedAt = jwt.NewNumericDate(c.IssuedAt)
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, wire).SignedString(secret)
}

// Option configures a Verifier.
type Option func(*Verifier) error

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option {
	return func(v *Verifier) error {
		if now == nil {
			return errors.New("auth: WithClock(nil)")
		}
		v.now = now
		return nil
	}
}

// WithCacheTTL sets how long a validated token is trusted without checking its signature again
// (default 60 s, never past its exp). 0 disables the cache.
func WithCacheTTL(d time.Duration) Option {
	return func(v *Verifier) error {
		if d < 0 {
			return errors.New("auth: negative cache TTL")
		}
		v.ttl = d
		return nil
	}
}

// WithCacheSize bounds the number of cached tokens (default 10000, least recently used evicted).
func WithCacheSize(n int) Option {
	return func(v *Verifier) error {
		if n < 1 {
			return errors.New("auth: cache size must be positive")
		}
		v.size = n
		return nil
	}
}

// WithIssuer requires the iss claim to equal iss.
func WithIssuer(iss string) Option {
	return func(v *Verifier) error {
		v.parserOpts = append(v.parserOpts, jwt.WithIssuer(iss))
		return nil
	}
}

// WithAudience requires aud to contain aud.
func WithAudience(aud string) Option {
	return func(v *Verifier) error {
		v.parserOpts = append(v.parserOpts, jwt.WithAudience(aud))
		return nil
	}
}

// Verifier checks user tokens (Bearer JWTs) and caches the valid ones. It is safe for concurrent
// use.
type Verifier struct {
	keyfunc    func(ctx context.Context) jwt.Keyfunc
	methods    []string
	now        func() time.Time
	ttl        time.Duration
	size       int
	parserOpts []jwt.ParserOption
	parser     *jwt.Parser
	cache      *lru.Cache[[sha256.Size]byte, cacheEntry]
}

type cacheEntry struct {
	claims *Claims
	until  time.Time // min(validated at + TTL, exp)
}

// NewHS256Verifier verifies HS256 tokens signed with secret (JWT_SECRET). Any other alg,
// including "none", is refused.
func NewHS256Verifier(secret []byte, opts ...Option) (*Verifier, error) {
	if len(secret) == 0 {
		return nil, errors.New("auth: empty HS256 secret")
	}
	key := append([]byte(nil), secret...)
	kf := func(context.Context) jwt.Keyfunc {
		return func(*jwt.Token) (any, error) { return key, nil }
	}
	return newVerifier(kf, []string{"HS256"}, opts)
}

// JWK Set fetching: the first fetch happens in NewJWKSVerifier (a failure is not fatal: tokens
// are refused until a refresh succeeds), then hourly, and on an unknown kid at most every 5
// minutes. Each fetch is bounded by jwksFetchTimeout; a token with an unknown kid waits at most
// jwksUnknownKIDWait for the refresh.
const (
	jwksFetchTimeout   = 10 * time.Second
	jwksRefresh        = time.Hour
	jwksUnknownKIDWait = 5 * time.Second
)

// NewJWKSVerifier verifies asymmetric tokens (RS*, PS*, ES*, EdDSA) against the JWK Set at
// jwksURL (JWT_JWKS_URL). The set is fetched now and refreshed in the background until ctx ends.
// HS* and "none" are refused, and a key whose JWK names an alg accepts only that alg.
func NewJWKSVerifier(ctx context.Context, jwksURL string, opts ...Option) (*Verifier, error) {
	store, err := jwkset.NewStorageFromHTTP(jwksURL, jwkset.HTTPClientStorageOptions{
		Ctx:                       ctx,
		HTTPTimeout:               jwksFetchTimeout,
		NoErrorReturnFirstHTTPReq: true,
		RefreshInterval:           jwksRefresh,
		RefreshErrorHandler: func(ctx context.Context, err error) {
			slog.Default().WarnContext(ctx, "JWK Set refresh failed", "url", jwksURL, "error", err)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("auth: JWK Set %s: %w", jwksURL, err)
	}
	client, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs:          map[string]jwkset.Storage{jwksURL: store},
		RateLimitWaitMax:  jwksUnknownKIDWait,
		RefreshUnknownKID: rate.NewLimiter(rate.Every(5*time.Minute), 1),
	})
	if err != nil {
		return nil, fmt.Errorf("auth: JWK Set %s: %w", jwksURL, err)
	}
	k, err := keyfunc.New(keyfunc.Options{Ctx: ctx, Storage: client})
	if err != nil {
		return nil, fmt.Errorf("auth: JWK Set %s: %w", jwksURL, err)
	}
	return newVerifier(k.KeyfuncCtx, jwksMethods, opts)
}

// NewVerifier picks the verifier the configuration asks for: the JWK Set when jwksURL is set,
// else HS256 with secret.
func NewVerifier(ctx context.Context, jwksURL string, secret []byte, opts ...Option) (*Verifier, error) {
	if jwksURL != "" {
		return NewJWKSVerifier(ctx, jwksURL, opts...)
	}
	return NewHS256Verifier(secret, opts...)
}

func newVerifier(kf func(context.Context) jwt.Keyfunc, methods []string, opts []Option) (*Verifier, error) {
	v := &Verifier{keyfunc: kf, methods: methods, now: time.Now, ttl: DefaultCacheTTL, size: DefaultCacheSize}
	for _, o := range opts {
		if err := o(v); err != nil {
			return nil, err
		}
	}
	v.parser = jwt.NewParser(append([]jwt.ParserOption{
		jwt.WithValidMethods(v.methods),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(v.now),
	}, v.parserOpts...)...)
	if v.ttl > 0 {
		c, err := lru.New[[sha256.Size]byte, cacheEntry](v.size)
		if err != nil {
			return nil, err
		}
		v.cache = c
	}
	return v, nil
}

// Verify checks token's signature, algorithm, exp (required), nbf/iat when present (numbers; iat
// not in the future), no crit header and sub (required) and returns its claims, which callers must not modify (cached tokens share them).
// A token validated less than the cache TTL ago and not yet expired is answered from the cache,
// keyed by the SHA-256 of the token. Errors wrap ErrTokenExpired or ErrInvalidToken.
func (v *Verifier) Verify(ctx context.Context, token string) (*Claims, error) {
	now := v.now()
	var key [sha256.Size]byte
	if v.cache != nil {
		key = sha256.Sum256([]byte(token))
		if e, ok := v.cache.Get(key); ok {
			if now.Before(e.until) {
				return e.claims, nil
			}
			v.cache.Remove(key)
		}
	}
	var wire userClaims
	tok, err := v.parser.ParseWithClaims(token, &wire, v.keyfunc(ctx))
	if err != nil {
		if errors.Is(err, jwt.ErrTokenExpired) {
			return nil, fmt.Errorf("%w: %w", ErrTokenExpired, err)
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	if err := noCrit(tok); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	if wire.Subject == "" {
		return nil, fmt.Errorf("%w: no sub claim", ErrInvalidToken)
	}
	c := &Claims{
		Subject:     wire.Subject,
		Username:    wire.Username,
		Email:       wire.Email,
		Permissions: wire.Permissions,
		ExpiresAt:   wire.ExpiresAt.UTC(),
	}
	if wire.IssuedAt != nil {
		c.IssuedAt = wire.IssuedAt.UTC()
	}
	if v.cache != nil {
		until := now.Add(v.ttl)
		if c.ExpiresAt.Before(until) {
			until = c.ExpiresAt
		}
		v.cache.Add(key, cacheEntry{claims: c, until: until})
	}
	return c, nil
}
