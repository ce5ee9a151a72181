package httpx_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/internal/httpx"
)

func TestUnknownQuery(t *testing.T) {
	app := fiber.New()
	app.Get("/", func(c *fiber.Ctx) error {
		return c.SendString(httpx.UnknownQuery(c, "page", "per_page", "perPage"))
	})
	long := strings.Repeat("x", 70)
	for name, tc := range map[string]struct{ query, want string }{
		"none":                         {"", ""},
		"known only":                   {"?page=2&per_page=5&perPage=5", ""},
		"known, empty and repeated":    {"?page=&page=3&per_page", ""},
		"misspelt":                     {"?perpage=5", "unknown query parameter(s): perpage"},
		"case differs":                 {"?Page=2&PER_PAGE=5", "unknown query parameter(s): Page, PER_PAGE"},
		"in the order sent, once each": {"?zeta=1&page=1&alpha=2&zeta=3", "unknown query parameter(s): zeta, alpha"},
		"percent-encoded name decoded": {"?per%5Fpage=5&st%61tus=x", "unknown query parameter(s): status"},
		"empty name quoted":            {"?=x", `unknown query parameter(s): ""`},
		"blank and comma quoted":       {"?a+b=1&c%2Cd=2", `unknown query parameter(s): "a b", "c,d"`},
		"control character quoted":     {"?a%0Ab=1", `unknown query parameter(s): "a\nb"`},
		"long name cut":                {"?" + long + "=1", "unknown query parameter(s): " + strings.Repeat("x", 64) + "…"},
		"past ten names counted":       {"?a=1&b=1&c=1&d=1&e=1&f=1&g=1&h=1&i=1&j=1&k=1&l=1&m=1", "unknown query parameter(s): a, b, c, d, e, f, g, h, i, j and 3 more"},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := app.Test(httptest.NewRequest(http.MethodGet, "/"+tc.query, nil))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(res.Body)
			if string(got) != tc.want {
				t.Fatalf("UnknownQuery(%q) = %q, want %q", tc.query, got, tc.want)
			}
		})
	}
}

func TestOnlyQuery(t *testing.T) {
	app := httpx.New(httpx.Config{Service: "test"})
	// The authentication runs first: a caller without it learns nothing about the parameters.
	auth := func(c *fiber.Ctx) error {
		if c.Get("Authorization") == "" {
			return httpx.NewError(http.StatusUnauthorized, "no credentials")
		}
		return c.Next()
	}
	app.Get("/things/:id", auth, httpx.OnlyQuery(), func(c *fiber.Ctx) error { return c.SendString(c.Params("id")) })
	app.Get("/things", auth, httpx.OnlyQuery("search"), func(c *fiber.Ctx) error { return c.SendString(c.Query("search")) })
	for name, tc := range map[string]struct {
		path, authorization string
		status              int
		problem             string
	}{
		"detail without a query":            {"/things/7", "x", 200, ""},
		"detail with any parameter":         {"/things/7?expand=1", "x", 400, "unknown query parameter(s): expand"},
		"list with its parameter":           {"/things?search=ana", "x", 200, ""},
		"list with a misspelt parameter":    {"/things?serch=ana&search=x", "x", 400, "unknown query parameter(s): serch"},
		"without credentials: 401, not 400": {"/things?serch=ana", "", 401, ""},
	} {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tc.path, nil)
			if tc.authorization != "" {
				req.Header.Set("Authorization", tc.authorization)
			}
			res, err := app.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status {
				t.Fatalf("%s = %d %s, want %d", tc.path, res.StatusCode, body, tc.status)
			}
			if tc.status != http.StatusBadRequest {
				return
			}
			var env httpx.Envelope
			if err := json.Unmarshal(body, &env); err != nil {
				t.Fatal(err)
			}
			if env.Status != "error" || env.StatusCode != 400 || env.Message != httpx.ValidationMessage || !slices.Equal(env.Errors, []string{tc.problem}) {
				t.Fatalf("400 body %s, want the validation envelope with %q", body, tc.problem)
			}
		})
	}
}
