package erp_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
)

// The client keeps its connection to the ERP: sequential calls, a not-found included, share one
// TCP connection, and concurrent callers never open more connections than there are callers.
func TestConnectionReuse(t *testing.T) {
	fake := erptest.NewFake()
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(fake)
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(func() { fake.Close(); ts.Close() })
	c, err := erp.New(erp.Config{BaseURL: ts.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for range 60 {
		// Unknown clients: a business answer, with a body the client must read to the end.
		_, _ = c.LookupClient(t.Context(), "000598", "0102030405")
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("60 sequential calls opened %d TCP connections, want 1", n)
	}
	const callers = 8
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range 20 {
				_, _ = c.LookupClient(t.Context(), "000598", "0102030405")
			}
		})
	}
	wg.Wait()
	if n := conns.Load(); n > callers {
		t.Fatalf("%d concurrent callers opened %d TCP connections in all, want at most %d", callers, n, callers)
	}
}
