package carrier_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
)

func benchTopups(b *testing.B, c *carrier.Client) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		_, err := c.Topup(b.Context(), topup("BENCH-"+strconv.Itoa(i), "593987654321"))
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTopupLoopback is a whole top-up through the client against the
// fake SPR over HTTP on loopback, keep-alive connection reused.
func BenchmarkTopupLoopback(b *testing.B) {
	srv := carriertest.NewServer(carriertest.WithStock("31", "Pin 3", 1<<40))
	defer srv.Close()
	c, err := carrier.New(carrier.Config{URL: srv.URL, Timeout: 2 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	benchTopups(b, c)
}

// BenchmarkTopupMockMode is the same against the in-process fake of mock
// mode, without sockets.
func BenchmarkTopupMockMode(b *testing.B) {
	c, fake, err := carriertest.NewMock(carrier.Config{Timeout: 2 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	fake.SetStock("31", "Pin 3", 1<<40)
	benchTopups(b, c)
}
