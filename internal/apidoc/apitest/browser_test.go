package apitest_test

import (
	"net"
	"os"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/internal/apidoc"
	"github.com/platform/integrations/internal/apidoc/apitest"
)

// The documentation page renders every operation of a document, without a console error.
func TestDocsPageInChromium(t *testing.T) {
	raw, err := os.ReadFile("../testdata/petstore.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := apidoc.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	apidoc.Mount(app, d)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	contract(t).CheckDocsPage(t, "http://"+ln.Addr().String())
}

// A page that logs an error or throws is reported.
func TestLoadDocsPageReportsConsoleErrors(t *testing.T) {
	chromium := apitest.Chromium(t)
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Get("/docs", func(c *fiber.Ctx) error {
		c.Set("Content-Type", "text/html")
		return c.SendString(`<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body>
<div data-section-id="operation/getThing">Get a thing</div>
<script>console.error("boom"); setTimeout(function () { throw new Error("late failure"); }, 10);</script></body></html>`)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	page, err := apitest.LoadDocsPage(t.Context(), chromium, "http://"+ln.Addr().String()+"/docs")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(page.ConsoleErrors, "\n")
	if !strings.Contains(got, "boom") || !strings.Contains(got, "late failure") {
		t.Errorf("console errors %q, want boom and late failure", got)
	}
	if len(page.Sections) != 1 || page.Sections[0] != "operation/getThing" {
		t.Errorf("sections %q", page.Sections)
	}
}
