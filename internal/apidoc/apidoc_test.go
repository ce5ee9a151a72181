package apidoc_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/internal/apidoc"
)

func TestLoadConvertsToJSON(t *testing.T) {
	raw, err := os.ReadFile("testdata/petstore.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := apidoc.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "Test service" || d.Version != "1.0.0" {
		t.Errorf("info = %q %q", d.Title, d.Version)
	}
	var v struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]struct {
					Example map[string]any `json:"example"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(d.JSON, &v); err != nil {
		t.Fatal(err)
	}
	// Status codes are object keys; a date stays the string it was written as.
	ex := v.Paths["/things/{id}"]["get"].Responses["200"].Content["application/json"].Example
	if ex["created"] != "2026-11-27" {
		t.Errorf("example created = %#v, want the string 2026-11-27", ex["created"])
	}
}

func TestLoadRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"not YAML":    "openapi: [",
		"OpenAPI 3.0": "openapi: 3.0.3\ninfo: {title: x, version: '1'}\npaths: {}\n",
		"no title":    "openapi: 3.1.0\ninfo: {version: '1'}\npaths: {}\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := apidoc.Load([]byte(doc)); err == nil {
				t.Fatal("Load accepted it")
			}
		})
	}
}

func TestMount(t *testing.T) {
	raw, _ := os.ReadFile("testdata/petstore.yaml")
	d, err := apidoc.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New()
	apidoc.Mount(app, d)
	tests := []struct {
		path, contentType, contains string
	}{
		{apidoc.PathJSON, "application/json", `"openapi":"3.1.0"`},
		{apidoc.PathYAML, "application/yaml", "openapi: 3.1.0"},
		{apidoc.PathDocs, "text/html", `<redoc spec-url="/openapi.json"`},
		{apidoc.PathBundle, "application/javascript", "Redoc"},
		{apidoc.PathIndex, "text/html", `href="/docs"`},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := app.Test(httptest.NewRequest(http.MethodGet, tc.path, nil), -1)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.contentType) ||
				!strings.Contains(string(body), tc.contains) {
				t.Errorf("GET %s: %d %s, body has %q: %v", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.contains, strings.Contains(string(body), tc.contains))
			}
		})
	}
}

// The page works offline: the embedded bundle loads nothing from a CDN (make docs-assets).
func TestBundleLoadsNothingFromTheNetwork(t *testing.T) {
	b, err := os.ReadFile("assets/redoc.standalone.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"cdn.redoc.ly", "fonts.googleapis.com", "unpkg.com", "cdn.jsdelivr.net"} {
		if strings.Contains(string(b), host) {
			t.Errorf("the Redoc bundle refers to %s", host)
		}
	}
}
