package carrier_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/platform/integrations/carrier/carriertest"
)

// With its default transport the client keeps its connection to the SPR: sequential calls, refusals included, share one TCP
// connection, and concurrent callers never open more connections than there are callers.
func TestDefaultTransportKeepsConnections(t *testing.T) {
	fake := carriertest.NewFake(carriertest.WithCredentials(sprUser, sprPassword, sprCompany))
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(fake)
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(func() { fake.Close(); ts.Close() })
	c := newClient(t, config(ts.URL+"/spr", 5*time.Second))

	for i := range 60 {
		subscriber := "593987654321"
		if i%3 == 1 {
			subscriber = "593990000001" // refused by the carrier (magic subscriber)
		}
		_, _ = c.Topup(t.Context(), topup(fmt.Sprintf("T-REUSE-%d", i), subscriber))
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("60 sequential calls opened %d TCP connections, want 1", n)
	}

	// Rounds of 8 concurrent calls: the idle pool keeps what the first rounds opened (a pool
	// of 3, resty's default, opened 5 new connections in every round, about 100 in all).
	const callers, rounds = 8, 20
	for r := range rounds {
		var wg sync.WaitGroup
		for w := range callers {
			wg.Go(func() {
				if _, err := c.Topup(t.Context(), topup(fmt.Sprintf("T-PAR-%d-%d", r, w), "593987654321")); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	if n := conns.Load(); n > 2*callers {
		t.Fatalf("%d rounds of %d concurrent calls opened %d TCP connections in all, want at most %d", rounds, callers, n, 2*callers)
	}
}
