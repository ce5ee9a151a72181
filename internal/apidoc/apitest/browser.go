package apitest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// EnvRequireChromium makes the browser checks fail, instead of skip, when Chromium is missing
// (.ci/run sets it after installing Debian's chromium).
const EnvRequireChromium = "REQUIRE_CHROMIUM"

// Chromium returns the path of the Chromium binary (CHROMIUM_PATH, else chromium or
// chromium-browser on PATH). Without one the test is skipped, or failed under REQUIRE_CHROMIUM=1.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(EnvRequireChromium) == "1" {
		t.Fatal("Chromium not found and REQUIRE_CHROMIUM=1 (apt-get install chromium, or set CHROMIUM_PATH)")
	}
	t.Skip("Chromium not found: the docs page is not checked in a browser (REQUIRE_CHROMIUM=1 fails instead)")
	return ""
}

// Page is what a headless Chromium saw on a documentation page.
type Page struct {
	// Sections are the page's rendered sections (Redoc's data-section-id attributes, e.g.
	// "tag/Consumo/operation/authorize").
	Sections []string
	// ConsoleErrors are console.error calls, uncaught exceptions and browser log errors (a failed
	// load, a refused script).
	ConsoleErrors []string
}

// LoadDocsPage opens url in headless Chromium, waits until Redoc has rendered the operations and
// returns what the page shows.
func LoadDocsPage(ctx context.Context, chromium, url string) (*Page, error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
	)
	actx, cancel := chromedp.NewExecAllocator(ctx, opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()

	// Subscribe before navigating so no message is lost.
	mctx, stop := context.WithCancel(bctx)
	defer stop()
	messages := chromedp.Console(mctx)
	page := &Page{}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				page.ConsoleErrors = append(page.ConsoleErrors, m.String())
				mu.Unlock()
			}
		}
	}()
	err := chromedp.Do(bctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(`[data-section-id*="operation/"]`)),
		// Let the page settle: late errors (a worker, a lazy chunk) count too.
		chromedp.Sleep(500*time.Millisecond),
	)
	if err == nil {
		page.Sections, err = chromedp.Run(bctx, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll('[data-section-id]')).map(e => e.getAttribute('data-section-id'))`))
	}
	stop()
	<-done
	if err != nil {
		return page, fmt.Errorf("load %s: %w (console: %v)", url, err, page.ConsoleErrors)
	}
	return page, nil
}

// CheckDocsPage loads baseURL+"/docs" in headless Chromium and fails t unless every operation of
// the document is rendered and the page logged no error.
func (c *Contract) CheckDocsPage(t testing.TB, baseURL string) {
	t.Helper()
	chromium := Chromium(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	page, err := LoadDocsPage(ctx, chromium, baseURL+"/docs")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range page.ConsoleErrors {
		t.Errorf("docs page: %s", e)
	}
	for path, item := range c.doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == "" {
				t.Errorf("%s %s has no operationId", method, path)
				continue
			}
			if !slices.ContainsFunc(page.Sections, func(s string) bool { return strings.HasSuffix(s, "operation/"+op.OperationID) }) {
				t.Errorf("docs page does not show %s %s (operation/%s)", method, path, op.OperationID)
			}
		}
	}
}
