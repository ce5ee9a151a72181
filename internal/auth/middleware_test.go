package auth_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/golang-jwt/jwt/v5"

	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/httpx"
)

var (
	userSecret   = []byte("user-secret-for-tests-0123456789")
	actionSecret = []byte("action-secret-for-tests-98765432")
)

const (
	creditsystemKey = "cs-key-for-tests"
	workflowKey     = "wf-key-for-tests"
)

func userToken(t *testing.T, sub string, ttl time.Duration, perms ...string) string {
	t.Helper()
	tok, err := auth.SignUserToken(userSecret, auth.Claims{
		Subject: sub, Username: "user-" + sub, Email: sub + "@example.com", Permissions: perms,
		ExpiresAt: time.Now().Add(ttl),
	})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

type principalView struct {
	Scheme string `json:"scheme"`
	Origin string `json:"origin"`
	Sub    string `json:"sub"`
	JTI    string `json:"jti"`
}

func newApp(t *testing.T, opts ...auth.AuthenticatorOption) (*fiber.App, *auth.ActionTokens) {
	t.Helper()
	v, err := auth.NewHS256Verifier(userSecret)
	if err != nil {
		t.Fatal(err)
	}
	if opts == nil {
		opts = []auth.AuthenticatorOption{auth.WithServiceKey(creditsystemKey), auth.WithHeaderKey(workflowKey)}
	}
	a := auth.NewAuthenticator(v, opts...)
	at, err := auth.NewActionTokens(actionSecret)
	if err != nil {
		t.Fatal(err)
	}
	show := func(c *fiber.Ctx) error {
		p := auth.PrincipalFrom(c)
		tok, _ := auth.ActionTokenFrom(c)
		return c.JSON(principalView{Scheme: p.Scheme.String(), Origin: p.Origin, Sub: p.Subject(), JTI: tok.ID})
	}
	app := httpx.New(httpx.Config{Service: "auth-test"})
	app.Post("/consumo/cupo", auth.Require(a, auth.Bearer), show)
	app.Post("/clients", auth.Require(a, auth.Bearer, auth.ServiceKey), show)
	app.Post("/clients/from-creditsystem", auth.Require(a, auth.ServiceKey), show)
	app.Post("/webhook/invoice-recharge", auth.Require(a, auth.ServiceKeyHeader), show)
	app.Get("/transactions", auth.Require(a, auth.Bearer), auth.RequirePermission("view_recargas"), show)
	app.Post("/recharge", auth.Require(a, auth.Bearer), auth.RequirePermission("create_recargas"), auth.RequireActionToken(at), show)
	app.Get("/no-auth-but-permission", auth.RequirePermission("view_recargas"), show)
	return app, at
}

type reply struct {
	status int
	header http.Header
	env    map[string]any
	view   principalView
}

func call(t *testing.T, app *fiber.App, method, path string, headers map[string]string) reply {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := app.Test(req, 2000)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	r := reply{status: res.StatusCode, header: res.Header}
	if res.StatusCode >= 400 {
		if err := json.Unmarshal(body, &r.env); err != nil {
			t.Fatalf("error body is not JSON: %s", body)
		}
	} else if err := json.Unmarshal(body, &r.view); err != nil {
		t.Fatalf("body: %s", body)
	}
	return r
}

func TestRequire(t *testing.T) {
	app, _ := newApp(t)
	valid := userToken(t, "u-1", time.Hour, "view_recargas")
	expired := userToken(t, "u-1", -time.Minute)
	forged := func() string {
		tok, _ := auth.SignUserToken([]byte("some-other-secret"), auth.Claims{Subject: "u-1", ExpiresAt: time.Now().Add(time.Hour)})
		return tok
	}()
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "u-1", "exp": time.Now().Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	tampered := valid[:len(valid)-4] + "AAAA"

	cases := []struct {
		name    string
		path    string
		headers map[string]string
		status  int
		message string
		origin  string
	}{
		{"missing header", "/consumo/cupo", nil, 401, "Missing credentials", ""},
		{"wrong scheme", "/consumo/cupo", map[string]string{"Authorization": "Basic dXNlcjpwYXNz"}, 401, "Authorization scheme not accepted on this endpoint", ""},
		{"bare token without scheme", "/consumo/cupo", map[string]string{"Authorization": valid}, 401, "Authorization scheme not accepted on this endpoint", ""},
		{"empty bearer", "/consumo/cupo", map[string]string{"Authorization": "Bearer "}, 401, "Invalid token", ""},
		{"bad signature", "/consumo/cupo", map[string]string{"Authorization": "Bearer " + forged}, 401, "Invalid token", ""},
		{"tampered signature", "/consumo/cupo", map[string]string{"Authorization": "Bearer " + tampered}, 401, "Invalid token", ""},
		{"alg none", "/consumo/cupo", map[string]string{"Authorization": "Bearer " + none}, 401, "Invalid token", ""},
		{"expired token", "/consumo/cupo", map[string]string{"Authorization": "Bearer " + expired}, 401, "Token expired", ""},
		{"ServiceKey on a Bearer-only route", "/consumo/cupo", map[string]string{"Authorization": "ServiceKey " + creditsystemKey}, 401, "Authorization scheme not accepted on this endpoint", ""},
		{"valid bearer", "/consumo/cupo", map[string]string{"Authorization": "Bearer " + valid}, 200, "", auth.OriginDashboard},
		{"scheme is case-insensitive", "/consumo/cupo", map[string]string{"Authorization": "bearer " + valid}, 200, "", auth.OriginDashboard},

		{"client route with bearer", "/clients", map[string]string{"Authorization": "Bearer " + valid}, 200, "", auth.OriginDashboard},
		{"client route with service key", "/clients", map[string]string{"Authorization": "ServiceKey " + creditsystemKey}, 200, "", auth.OriginCreditsystem},
		{"client route with wrong key", "/clients", map[string]string{"Authorization": "ServiceKey wrong"}, 401, "Invalid service key", ""},
		{"client route with key prefix", "/clients", map[string]string{"Authorization": "ServiceKey " + creditsystemKey[:5]}, 401, "Invalid service key", ""},
		{"client route with empty key", "/clients", map[string]string{"Authorization": "ServiceKey"}, 401, "Invalid service key", ""},
		{"client route without header", "/clients", nil, 401, "Missing credentials", ""},

		{"from-creditsystem with service key", "/clients/from-creditsystem", map[string]string{"Authorization": "ServiceKey " + creditsystemKey}, 200, "", auth.OriginCreditsystem},
		{"from-creditsystem with bearer", "/clients/from-creditsystem", map[string]string{"Authorization": "Bearer " + valid}, 401, "Authorization scheme not accepted on this endpoint", ""},
		{"from-creditsystem with x-service-key", "/clients/from-creditsystem", map[string]string{"x-service-key": creditsystemKey}, 401, "Missing credentials", ""},

		{"webhook with key", "/webhook/invoice-recharge", map[string]string{"x-service-key": workflowKey}, 200, "", auth.OriginWorkflow},
		{"webhook with wrong key", "/webhook/invoice-recharge", map[string]string{"x-service-key": "nope"}, 401, "Invalid service key", ""},
		{"webhook with the other service's key", "/webhook/invoice-recharge", map[string]string{"x-service-key": creditsystemKey}, 401, "Invalid service key", ""},
		{"webhook without key", "/webhook/invoice-recharge", nil, 401, "Missing credentials", ""},
		{"webhook with bearer", "/webhook/invoice-recharge", map[string]string{"Authorization": "Bearer " + valid}, 401, "Authorization scheme not accepted on this endpoint", ""},

		{"permission held", "/transactions", map[string]string{"Authorization": "Bearer " + valid}, 200, "", auth.OriginDashboard},
		{"permission missing", "/recharge", map[string]string{"Authorization": "Bearer " + valid, "X-Action-Token": "x"}, 403, "Missing permission: create_recargas", ""},
		{"permission check without Require", "/no-auth-but-permission", nil, 401, "Missing credentials", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := http.MethodPost
			if strings.HasPrefix(tc.path, "/transactions") || strings.HasPrefix(tc.path, "/no-auth") {
				method = http.MethodGet
			}
			r := call(t, app, method, tc.path, tc.headers)
			if r.status != tc.status {
				t.Fatalf("status = %d, want %d (%v)", r.status, tc.status, r.env)
			}
			if tc.status >= 400 {
				if r.env["status"] != "error" || r.env["statusCode"] != float64(tc.status) || r.env["message"] != tc.message {
					t.Errorf("envelope = %v, want message %q", r.env, tc.message)
				}
				if _, ok := r.env["errors"]; ok {
					t.Error("auth failures carry no errors list")
				}
				return
			}
			if r.view.Origin != tc.origin {
				t.Errorf("origin = %q, want %q", r.view.Origin, tc.origin)
			}
			if tc.origin == auth.OriginDashboard && r.view.Sub != "u-1" {
				t.Errorf("sub = %q", r.view.Sub)
			}
		})
	}
}

func TestChallengeHeader(t *testing.T) {
	app, _ := newApp(t)
	if got := call(t, app, http.MethodPost, "/consumo/cupo", nil).header.Get("WWW-Authenticate"); got != "Bearer" {
		t.Errorf("WWW-Authenticate on a Bearer route = %q", got)
	}
	if got := call(t, app, http.MethodPost, "/clients/from-creditsystem", nil).header.Get("WWW-Authenticate"); got != "ServiceKey" {
		t.Errorf("WWW-Authenticate on a ServiceKey route = %q", got)
	}
}

func TestUnconfiguredKeysRefuseEverything(t *testing.T) {
	app, _ := newApp(t, auth.WithServiceKey(""), auth.WithHeaderKey(""))
	for name, h := range map[string]map[string]string{
		"/clients/from-creditsystem": {"Authorization": "ServiceKey "},
		"/webhook/invoice-recharge":  {"x-service-key": ""},
	} {
		if r := call(t, app, http.MethodPost, name, h); r.status != http.StatusUnauthorized {
			t.Errorf("%s with an unconfigured key: %d", name, r.status)
		}
	}
	if r := call(t, app, http.MethodPost, "/clients/from-creditsystem", map[string]string{"Authorization": "ServiceKey anything"}); r.status != http.StatusUnauthorized {
		t.Errorf("unconfigured ServiceKey accepted a key: %d", r.status)
	}
}

func TestRequireActionToken(t *testing.T) {
	app, at := newApp(t)
	user := userToken(t, "u-7", time.Hour, "create_recargas")
	mine, minted, err := at.Mint("u-7")
	if err != nil {
		t.Fatal(err)
	}
	theirs, _, _ := at.Mint("u-8")
	short, err := auth.NewActionTokens(actionSecret, auth.WithActionClock(func() time.Time { return time.Now().Add(-10 * time.Minute) }))
	if err != nil {
		t.Fatal(err)
	}
	expired, _, _ := short.Mint("u-7")
	signedWithUserSecret, _, _ := func() (string, auth.ActionToken, error) {
		wrong, _ := auth.NewActionTokens(userSecret)
		return wrong.Mint("u-7")
	}()

	cases := []struct {
		name    string
		action  string
		status  int
		message string
	}{
		{"valid", mine, 200, ""},
		{"missing", "", 401, "Missing action token"},
		{"another user's", theirs, 401, "Invalid or expired action token"},
		{"expired", expired, 401, "Invalid or expired action token"},
		{"the user token itself", user, 401, "Invalid or expired action token"},
		{"signed with the user secret", signedWithUserSecret, 401, "Invalid or expired action token"},
		{"garbage", "abc", 401, "Invalid or expired action token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"Authorization": "Bearer " + user}
			if tc.action != "" {
				h["X-Action-Token"] = tc.action
			}
			r := call(t, app, http.MethodPost, "/recharge", h)
			if r.status != tc.status {
				t.Fatalf("status = %d, want %d (%v)", r.status, tc.status, r.env)
			}
			if tc.status != 200 {
				if r.env["message"] != tc.message || r.env["statusCode"] != float64(tc.status) {
					t.Errorf("envelope = %v", r.env)
				}
				return
			}
			if r.view.JTI != minted.ID || r.view.Sub != "u-7" {
				t.Errorf("handler saw %+v, want jti %s", r.view, minted.ID)
			}
		})
	}
}
