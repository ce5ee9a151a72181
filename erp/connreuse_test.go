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
	// Rounds of 8 concurrent calls: the idle pool keeps what the first rounds opened (a pool
	// of 3, resty's default, opened 5 new connections in every round, about 100 in all).
	const callers, rounds = 8, 20
	for range rounds {
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				_, _ = c.LookupClient(t.Context(), "000598", "0102030405")
			})
		}
		wg.Wait()
	}
	if n := conns.Load(); n > 2*callers {
		t.Fatalf("%d rounds of %d concurrent calls opened %d TCP connections in all, want at most %d", rounds, callers, n, 2*callers)
	}
}
