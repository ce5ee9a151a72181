package main

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/config"
)

var fixedNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func mint(t *testing.T, args []string, environ map[string]string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(args, env(environ), &out, io.Discard, func() time.Time { return fixedNow }); err != nil {
		t.Fatalf("run(%v): %v", args, err)
	}
	if !strings.HasSuffix(out.String(), "\n") || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("output is not one line: %q", out.String())
	}
	return strings.TrimSpace(out.String())
}

func verifier(t *testing.T, secret string, at time.Time) *auth.Verifier {
	t.Helper()
	v, err := auth.NewHS256Verifier([]byte(secret), auth.WithClock(func() time.Time { return at }))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestUserToken(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		environ map[string]string
		secret  string
		want    auth.Claims
	}{
		{"defaults", nil, nil, config.DevJWTSecret, auth.Claims{
			Subject: "dev-user", Username: "dev", Email: "dev@example.com",
			Permissions: []string{"create_recargas", "view_recargas"}, ExpiresAt: fixedNow.Add(time.Hour),
		}},
		{"flags", []string{"-sub", "u-9", "-username", "ana", "-email", "ana@example.com", "-permissions", " view_recargas, ,unlimited_recargas ", "-ttl", "10m"}, nil, config.DevJWTSecret, auth.Claims{
			Subject: "u-9", Username: "ana", Email: "ana@example.com",
			Permissions: []string{"view_recargas", "unlimited_recargas"}, ExpiresAt: fixedNow.Add(10 * time.Minute),
		}},
		{"no permissions", []string{"-permissions", ""}, nil, config.DevJWTSecret, auth.Claims{
			Subject: "dev-user", Username: "dev", Email: "dev@example.com", Permissions: []string{}, ExpiresAt: fixedNow.Add(time.Hour),
		}},
		{"JWT_SECRET from the environment", nil, map[string]string{"JWT_SECRET": "from-env-secret"}, "from-env-secret", auth.Claims{
			Subject: "dev-user", Username: "dev", Email: "dev@example.com",
			Permissions: []string{"create_recargas", "view_recargas"}, ExpiresAt: fixedNow.Add(time.Hour),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok := mint(t, tc.args, tc.environ)
			c, err := verifier(t, tc.secret, fixedNow).Verify(t.Context(), tok)
			if err != nil {
				t.Fatalf("printed token does not verify: %v", err)
			}
			if c.Subject != tc.want.Subject || c.Username != tc.want.Username || c.Email != tc.want.Email ||
				!slices.Equal(c.Permissions, tc.want.Permissions) || !c.ExpiresAt.Equal(tc.want.ExpiresAt) || !c.IssuedAt.Equal(fixedNow) {
				t.Errorf("claims = %+v, want %+v", c, tc.want)
			}
			if _, err := verifier(t, tc.secret, tc.want.ExpiresAt).Verify(t.Context(), tok); !errors.Is(err, auth.ErrTokenExpired) {
				t.Errorf("token still valid at its exp: %v", err)
			}
			if tc.secret != config.DevJWTSecret {
				if _, err := verifier(t, config.DevJWTSecret, fixedNow).Verify(t.Context(), tok); err == nil {
					t.Error("JWT_SECRET ignored: the development default verifies the token")
				}
			}
		})
	}
}

func TestActionToken(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		environ map[string]string
		secret  string
		sub     string
		exp     time.Time
	}{
		{"defaults", []string{"-action"}, nil, config.DevActionTokenSecret, "dev-user", fixedNow.Add(5 * time.Minute)},
		{"sub and ttl", []string{"-action", "-sub", "u-3", "-ttl", "90s"}, nil, config.DevActionTokenSecret, "u-3", fixedNow.Add(90 * time.Second)},
		{"ACTION_TOKEN_SECRET from the environment", []string{"-action"}, map[string]string{"ACTION_TOKEN_SECRET": "act-env", "JWT_SECRET": "user-env"}, "act-env", "dev-user", fixedNow.Add(5 * time.Minute)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok := mint(t, tc.args, tc.environ)
			at, err := auth.NewActionTokens([]byte(tc.secret), auth.WithActionClock(func() time.Time { return fixedNow }))
			if err != nil {
				t.Fatal(err)
			}
			got, err := at.Verify(tok, tc.sub)
			if err != nil {
				t.Fatalf("printed action token does not verify: %v", err)
			}
			if got.Action != auth.ActionRecharge || got.ID == "" || !got.ExpiresAt.Equal(tc.exp) {
				t.Errorf("action token = %+v, want exp %v", got, tc.exp)
			}
			if _, err := at.Verify(tok, "someone-else"); err == nil {
				t.Error("action token accepted for another user")
			}
		})
	}
}

func TestBadInvocations(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"unknown flag", []string{"-nope"}},
		{"negative ttl", []string{"-ttl", "-1m"}},
		{"empty sub", []string{"-sub", " "}},
		{"stray argument", []string{"extra"}},
		{"bad duration", []string{"-ttl", "soon"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(tc.args, env(nil), &out, io.Discard, time.Now); err == nil {
				t.Errorf("run(%v) succeeded", tc.args)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q on error", out.String())
			}
		})
	}
}
