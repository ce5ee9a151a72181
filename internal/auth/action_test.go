package auth_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/platform/integrations/internal/auth"
)

func TestActionTokens(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := now
	at, err := auth.NewActionTokens(actionSecret, auth.WithActionClock(func() time.Time { return clock }))
	if err != nil {
		t.Fatal(err)
	}
	tok, minted, err := at.Mint("u-1")
	if err != nil {
		t.Fatal(err)
	}
	if minted.Subject != "u-1" || minted.Action != auth.ActionRecharge || minted.ID == "" || !minted.ExpiresAt.Equal(now.Add(5*time.Minute)) {
		t.Errorf("minted = %+v", minted)
	}
	_, second, _ := at.Mint("u-1")
	if second.ID == minted.ID {
		t.Error("two tokens share a jti")
	}

	got, err := at.Verify(tok, "u-1")
	if err != nil || got != minted {
		t.Fatalf("Verify = %+v, %v; want %+v", got, err, minted)
	}

	forge := func(claims jwt.MapClaims, method jwt.SigningMethod, key any) string {
		s, err := jwt.NewWithClaims(method, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base := func() jwt.MapClaims {
		return jwt.MapClaims{"sub": "u-1", "act": "recharge", "jti": "j-1", "exp": now.Add(time.Minute).Unix()}
	}
	without := func(k string) jwt.MapClaims { m := base(); delete(m, k); return m }
	withClaim := func(k string, v any) jwt.MapClaims { m := base(); m[k] = v; return m }

	cases := []struct {
		name  string
		token string
		sub   string
		at    time.Time
	}{
		{"expired", tok, "u-1", now.Add(5 * time.Minute)},
		{"another user", tok, "u-2", now},
		{"wrong act", forge(withClaim("act", "transfer"), jwt.SigningMethodHS256, actionSecret), "u-1", now},
		{"no act", forge(without("act"), jwt.SigningMethodHS256, actionSecret), "u-1", now},
		{"no jti", forge(without("jti"), jwt.SigningMethodHS256, actionSecret), "u-1", now},
		{"no exp", forge(without("exp"), jwt.SigningMethodHS256, actionSecret), "u-1", now},
		{"no sub, empty subject asked", forge(without("sub"), jwt.SigningMethodHS256, actionSecret), "", now},
		{"alg none", forge(base(), jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType), "u-1", now},
		{"HS512", forge(base(), jwt.SigningMethodHS512, actionSecret), "u-1", now},
		{"other secret", forge(base(), jwt.SigningMethodHS256, userSecret), "u-1", now},
		{"issued in the future", forge(withClaim("iat", now.Add(time.Hour).Unix()), jwt.SigningMethodHS256, actionSecret), "u-1", now},
		{"exp as a string", forge(withClaim("exp", fmt.Sprint(now.Add(time.Minute).Unix())), jwt.SigningMethodHS256, actionSecret), "u-1", now},
		{"crit header", func() string {
			tok := jwt.NewWithClaims(jwt.SigningMethodHS256, base())
			tok.Header["crit"] = []string{"b64"}
			s, err := tok.SignedString(actionSecret)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}(), "u-1", now},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock = tc.at
			defer func() { clock = now }()
			if _, err := at.Verify(tc.token, tc.sub); !errors.Is(err, auth.ErrInvalidActionToken) {
				t.Errorf("Verify error = %v, want ErrInvalidActionToken", err)
			}
		})
	}
	if _, err := at.Verify(forge(base(), jwt.SigningMethodHS256, actionSecret), "u-1"); err != nil {
		t.Errorf("a well-formed foreign-minted token (any auth service can mint) refused: %v", err)
	}
}

func TestActionTokenOptions(t *testing.T) {
	if _, err := auth.NewActionTokens(nil); err == nil {
		t.Error("empty secret accepted")
	}
	if _, err := auth.NewActionTokens(actionSecret, auth.WithActionTTL(0)); err == nil {
		t.Error("zero TTL accepted")
	}
	at, _ := auth.NewActionTokens(actionSecret, auth.WithActionTTL(time.Minute))
	if _, _, err := at.Mint(""); err == nil {
		t.Error("token minted without a subject")
	}
	_, tok, _ := at.Mint("u")
	if d := time.Until(tok.ExpiresAt); d > time.Minute || d < 58*time.Second {
		t.Errorf("lifetime %v, want about 1m", d)
	}
}
