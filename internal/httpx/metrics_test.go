package httpx_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/internal/httpx"
)

// A route mounted at a group's root ("/" in group /api/items) has a template ending in a slash
// in Fiber; its route label has none, like every other route, so one series answers /api/items
// whichever way it was mounted.
func TestMetricsRouteLabelWithoutTrailingSlash(t *testing.T) {
	app := httpx.New(httpx.Config{Service: "test"})
	items := app.Group("/api").Group("/items")
	items.Get("/", func(c *fiber.Ctx) error { return c.SendString("list") })
	items.Get("/:id", func(c *fiber.Ctx) error { return c.SendString(c.Params("id")) })
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString("root") })
	for _, path := range []string{"/api/items", "/api/items/", "/api/items/7", "/"} {
		if resp, err := app.Test(httptest.NewRequest(http.MethodGet, path, nil)); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %v %v", path, resp, err)
		}
	}
	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	out := string(body)
	for _, want := range []string{
		`http_requests_total{method="GET",route="/api/items",service="test",status="200"} 2`,
		`http_requests_total{method="GET",route="/api/items/:id",service="test",status="200"} 1`,
		`http_requests_total{method="GET",route="/",service="test",status="200"} 1`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(out, `route="/api/items/"`) {
		t.Errorf("a route label ends in a slash:\n%s", out)
	}
}
