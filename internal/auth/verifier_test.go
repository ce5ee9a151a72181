package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
)

var testSecret = []byte("test-secret-0123456789abcdef")

// clock is an injectable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func sign(t testing.TB, method jwt.SigningMethod, key any, claims jwt.MapClaims, header map[string]any) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func userClaimsAt(now time.Time, ttl time.Duration) jwt.MapClaims {
	return jwt.MapClaims{
		"sub": "u-1", "username": "ana", "email": "ana@example.com",
		"permissions": []string{"create_recargas", "view_recargas"},
		"exp":         now.Add(ttl).Unix(), "iat": now.Unix(),
	}
}

func rsaKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// countingVerifier counts key lookups, i.e. signature checks, to tell cache hits from misses.
func countingVerifier(t *testing.T, c *clock, opts ...Option) (*Verifier, *atomic.Int32) {
	t.Helper()
	v, err := NewHS256Verifier(testSecret, append([]Option{WithClock(c.Now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	inner := v.keyfunc
	v.keyfunc = func(ctx context.Context) jwt.Keyfunc {
		kf := inner(ctx)
		return func(tok *jwt.Token) (any, error) { n.Add(1); return kf(tok) }
	}
	return v, &n
}

func TestVerifyHS256(t *testing.T) {
	c := newClock()
	now := c.Now()
	rsa := rsaKey(t)
	without := func(k string) jwt.MapClaims { m := userClaimsAt(now, time.Hour); delete(m, k); return m }
	withClaim := func(k string, v any) jwt.MapClaims { m := userClaimsAt(now, time.Hour); m[k] = v; return m }
	cases := []struct {
		name  string
		token string
		want  error
	}{
		{"valid", sign(t, jwt.SigningMethodHS256, testSecret, userClaimsAt(now, time.Hour), nil), nil},
		{"expired", sign(t, jwt.SigningMethodHS256, testSecret, userClaimsAt(now, -time.Second), nil), ErrTokenExpired},
		{"expires now", sign(t, jwt.SigningMethodHS256, testSecret, userClaimsAt(now, 0), nil), ErrTokenExpired},
		{"no exp", sign(t, jwt.SigningMethodHS256, testSecret, without("exp"), nil), ErrInvalidToken},
		{"no sub", sign(t, jwt.SigningMethodHS256, testSecret, without("sub"), nil), ErrInvalidToken},
		{"not yet valid", sign(t, jwt.SigningMethodHS256, testSecret, withClaim("nbf", now.Add(time.Minute).Unix()), nil), ErrInvalidToken},
		{"permissions not an array", sign(t, jwt.SigningMethodHS256, testSecret, withClaim("permissions", "create_recargas"), nil), ErrInvalidToken},
		{"wrong secret", sign(t, jwt.SigningMethodHS256, []byte("another-secret"), userClaimsAt(now, time.Hour), nil), ErrInvalidToken},
		{"HS512", sign(t, jwt.SigningMethodHS512, testSecret, userClaimsAt(now, time.Hour), nil), ErrInvalidToken},
		{"alg none", sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, userClaimsAt(now, time.Hour), nil), ErrInvalidToken},
		{"RS256 on an HS256 verifier", sign(t, jwt.SigningMethodRS256, rsa, userClaimsAt(now, time.Hour), nil), ErrInvalidToken},
		{"issued in the future", sign(t, jwt.SigningMethodHS256, testSecret, withClaim("iat", now.Add(time.Hour).Unix()), nil), ErrInvalidToken},
		{"exp as a string", sign(t, jwt.SigningMethodHS256, testSecret, withClaim("exp", fmt.Sprint(now.Add(time.Hour).Unix())), nil), ErrInvalidToken},
		{"iat as a string", sign(t, jwt.SigningMethodHS256, testSecret, withClaim("iat", fmt.Sprint(now.Unix())), nil), ErrInvalidToken},
		{"nbf as a string", sign(t, jwt.SigningMethodHS256, testSecret, withClaim("nbf", fmt.Sprint(now.Unix())), nil), ErrInvalidToken},
		{"crit header", sign(t, jwt.SigningMethodHS256, testSecret, userClaimsAt(now, time.Hour), map[string]any{"crit": []string{"exp"}}), ErrInvalidToken},
		{"garbage", "not.a.jwt", ErrInvalidToken},
		{"empty", "", ErrInvalidToken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := NewHS256Verifier(testSecret, WithClock(c.Now))
			if err != nil {
				t.Fatal(err)
			}
			claims, err := v.Verify(t.Context(), tc.token)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify error = %v, want %v", err, tc.want)
			}
			if tc.want != nil {
				if claims != nil {
					t.Error("claims returned with an error")
				}
				// A refused token is not cached: asking again refuses again.
				if _, err := v.Verify(t.Context(), tc.token); !errors.Is(err, tc.want) {
					t.Errorf("second Verify error = %v", err)
				}
				return
			}
			if claims.Subject != "u-1" || claims.Username != "ana" || claims.Email != "ana@example.com" ||
				!claims.HasPermission("view_recargas") || claims.HasPermission("unlimited_recargas") ||
				!claims.ExpiresAt.Equal(now.Add(time.Hour)) || !claims.IssuedAt.Equal(now) {
				t.Errorf("claims = %+v", claims)
			}
		})
	}
}

func TestCacheNeverOutlivesExp(t *testing.T) {
	cases := []struct {
		name string
		ttl  time.Duration // token lifetime
	}{
		{"exp in 1s", time.Second},
		{"exp in 30s", 30 * time.Second},
		{"exp in 59s", 59 * time.Second},
		{"exp in 60s", 60 * time.Second},
		{"exp in 61s", 61 * time.Second},
		{"exp in 1h", time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			start := c.Now()
			v, _ := countingVerifier(t, c)
			token := sign(t, jwt.SigningMethodHS256, testSecret, userClaimsAt(start, tc.ttl), nil)
			exp := start.Add(tc.ttl)
			// Walk the clock in small steps from the first check to past exp; for long-lived
			// tokens, sweep the first two minutes and the seconds around exp.
			var instants []time.Time
			for at := start; at.Before(exp.Add(3*time.Second)) && at.Sub(start) <= 2*time.Minute; at = at.Add(250 * time.Millisecond) {
				instants = append(instants, at)
			}
			for at := exp.Add(-2 * time.Second); at.Before(exp.Add(3 * time.Second)); at = at.Add(250 * time.Millisecond) {
				if at.After(instants[len(instants)-1]) {
					instants = append(instants, at)
				}
			}
			for _, at := range instants {
				c.Set(at)
				_, err := v.Verify(t.Context(), token)
				if at.Before(exp) && err != nil {
					t.Fatalf("at exp-%v: %v", exp.Sub(at), err)
				}
				if !at.Before(exp) && !errors.Is(err, ErrTokenExpired) {
					t.Fatalf("token accepted %v after its exp (err %v)", at.Sub(exp), err)
				}
			}
		})
	}
}

func TestCacheLifetime(t *testing.T) {
	c := newClock()
	start := c.Now()
	v, checks := countingVerifier(t, c)
	token := sign(t, jwt.SigningMethodHS256, testSecret, userClaimsAt(start, time.Hour), nil)
	steps := []struct {
		at     time.Duration
		checks int32 // signature checks so far
	}{
		{0, 1},
		{30 * time.Second, 1},
		{59 * time.Second, 1},
		{60 * time.Second, 2}, // cached for 60 s, then checked again
		{90 * time.Second, 2},
		{120 * time.Second, 3},
	}
	for _, s := range steps {
		c.Set(start.Add(s.at))
		if _, err := v.Verify(t.Context(), token); err != nil {
			t.Fatalf("at +%v: %v", s.at, err)
		}
		if got := checks.Load(); got != s.checks {
			t.Errorf("at +%v: %d signature checks, want %d", s.at, got, s.checks)
		}
	}

	// Without a cache every call checks the signature.
	nc, ncChecks := countingVerifier(t, c, WithCacheTTL(0))
	for range 3 {
		if _, err := nc.Verify(t.Context(), token); err != nil {
			t.Fatal(err)
		}
	}
	if ncChecks.Load() != 3 {
		t.Errorf("uncached verifier: %d checks, want 3", ncChecks.Load())
	}
}

// jwksServer serves the public half of key as a JWK Set.
func jwksServer(t *testing.T, key *rsa.PrivateKey, kid string) *httptest.Server {
	t.Helper()
	jwk, err := jwkset.NewJWKFromKey(key.Public(), jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{ALG: jwkset.AlgRS256, KID: kid, USE: jwkset.UseSig}})
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{jwk.Marshal()}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestVerifyJWKS(t *testing.T) {
	c := newClock()
	now := c.Now()
	key := rsaKey(t)
	other := rsaKey(t)
	srv := jwksServer(t, key, "k1")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	v, err := NewVerifier(ctx, srv.URL, nil, WithClock(c.Now))
	if err != nil {
		t.Fatal(err)
	}

	// Algorithm confusion: HS256 keyed with the public key's bytes, as an attacker would.
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	kid := map[string]any{"kid": "k1"}

	cases := []struct {
		name  string
		token string
		want  error
	}{
		{"RS256 valid", sign(t, jwt.SigningMethodRS256, key, userClaimsAt(now, time.Hour), kid), nil},
		{"RS256 expired", sign(t, jwt.SigningMethodRS256, key, userClaimsAt(now, -time.Minute), kid), ErrTokenExpired},
		{"RS256 no exp", sign(t, jwt.SigningMethodRS256, key, func() jwt.MapClaims { m := userClaimsAt(now, time.Hour); delete(m, "exp"); return m }(), kid), ErrInvalidToken},
		{"RS256 by another key", sign(t, jwt.SigningMethodRS256, other, userClaimsAt(now, time.Hour), kid), ErrInvalidToken},
		{"HS256 with the public key PEM as secret", sign(t, jwt.SigningMethodHS256, pubPEM, userClaimsAt(now, time.Hour), kid), ErrInvalidToken},
		{"HS256 with the public key DER as secret", sign(t, jwt.SigningMethodHS256, der, userClaimsAt(now, time.Hour), kid), ErrInvalidToken},
		{"alg none", sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, userClaimsAt(now, time.Hour), kid), ErrInvalidToken},
		{"RS512 against an RS256 key", sign(t, jwt.SigningMethodRS512, key, userClaimsAt(now, time.Hour), kid), ErrInvalidToken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			claims, err := v.Verify(t.Context(), tc.token)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify error = %v, want %v", err, tc.want)
			}
			if tc.want == nil && claims.Subject != "u-1" {
				t.Errorf("claims = %+v", claims)
			}
		})
	}
}

func TestVerifierOptionsValidate(t *testing.T) {
	cases := []struct {
		name string
		make func() (*Verifier, error)
	}{
		{"empty secret", func() (*Verifier, error) { return NewHS256Verifier(nil) }},
		{"nil clock", func() (*Verifier, error) { return NewHS256Verifier(testSecret, WithClock(nil)) }},
		{"negative TTL", func() (*Verifier, error) { return NewHS256Verifier(testSecret, WithCacheTTL(-time.Second)) }},
		{"zero cache size", func() (*Verifier, error) { return NewHS256Verifier(testSecret, WithCacheSize(0)) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.make(); err == nil {
				t.Error("want an error")
			}
		})
	}
}

func TestIssuerAndAudience(t *testing.T) {
	c := newClock()
	v, err := NewHS256Verifier(testSecret, WithClock(c.Now), WithIssuer("https://idp.example"), WithAudience("platform"))
	if err != nil {
		t.Fatal(err)
	}
	good := userClaimsAt(c.Now(), time.Hour)
	good["iss"], good["aud"] = "https://idp.example", "platform"
	if _, err := v.Verify(t.Context(), sign(t, jwt.SigningMethodHS256, testSecret, good, nil)); err != nil {
		t.Errorf("matching iss/aud refused: %v", err)
	}
	bad := userClaimsAt(c.Now(), time.Hour)
	bad["iss"], bad["aud"] = "https://evil.example", "platform"
	if _, err := v.Verify(t.Context(), sign(t, jwt.SigningMethodHS256, testSecret, bad, nil)); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("wrong iss: %v", err)
	}
}

func BenchmarkVerifyCached(b *testing.B) {
	v, err := NewHS256Verifier(testSecret)
	if err != nil {
		b.Fatal(err)
	}
	token := sign(b, jwt.SigningMethodHS256, testSecret, userClaimsAt(time.Now(), time.Hour), nil)
	ctx := context.Background()
	if _, err := v.Verify(ctx, token); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, token); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyUncached(b *testing.B) {
	v, err := NewHS256Verifier(testSecret, WithCacheTTL(0))
	if err != nil {
		b.Fatal(err)
	}
	token := sign(b, jwt.SigningMethodHS256, testSecret, userClaimsAt(time.Now(), time.Hour), nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, token); err != nil {
			b.Fatal(err)
		}
	}
}
