package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// BenchmarkWebhookTopup measures automatic top-ups through the running service: POST
// /webhook/invoice-recharge over loopback HTTP, against the fake SPR on loopback, on each
// database, with 1 and with 8 concurrent clients. It reports top-ups per second, the median and
// p99 latency seen by the client, the same for a bare carrier.Client.Topup against the same fake
// with the same concurrency, and the service's share (median and p99 of the webhook minus those
// of the bare call): validation, the idempotency check, the pending insert and its commit, the outcome settled
// under a row lock with its audit row and notification job, and the HTTP layers.
//
//	TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	  go test -run '^$' -bench WebhookTopup -benchtime 2000x ./services/topup
func BenchmarkWebhookTopup(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		for _, clients := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/clients=%d", engine, clients), func(b *testing.B) {
				benchmarkWebhook(b, engine, clients)
			})
		}
	}
}

func benchmarkWebhook(b *testing.B, engine string, clients int) {
	var tg storagetest.Target
	if engine == "sqlite" {
		tg = storagetest.SQLite(b)
	} else {
		tg = storagetest.Postgres(b)
	}
	s := newStack(b, tg, map[string]string{"CARRIER_TIMEOUT": "5"}, carriertest.WithStock("30", "Pin 5", 1<<40))
	bare := bareTopupLatencies(b, s, 300, clients)

	bodies := make([]map[string]any, b.N)
	for i := range bodies {
		bodies[i] = invoice("RECCARRIER5", 5, fmt.Sprintf("59399%07d", 100+i%9000000))
	}
	var (
		mu   sync.Mutex
		lat  = make([]time.Duration, 0, b.N)
		next = make(chan int, b.N)
		fail int
	)
	for i := range b.N {
		next <- i
	}
	close(next)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for i := range next {
				t0 := time.Now()
				a := s.do("POST", webhookPath, bodies[i], serviceKey())
				d := time.Since(t0)
				mu.Lock()
				lat = append(lat, d)
				if a.status != http.StatusCreated || a.str("status") != "success" {
					fail++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if fail > 0 {
		b.Fatalf("%d of %d webhooks did not end in success", fail, b.N)
	}
	p50, p99 := percentile(lat, 50), percentile(lat, 99)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "topups/s")
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p99), "p99-ms")
	b.ReportMetric(ms(percentile(bare, 50)), "bare-p50-ms")
	b.ReportMetric(ms(percentile(bare, 99)), "bare-p99-ms")
	b.ReportMetric(ms(p50-percentile(bare, 50)), "service-p50-ms")
	b.ReportMetric(ms(p99-percentile(bare, 99)), "service-p99-ms")
}

// bareTopupLatencies times n SDK top-ups against the stack's fake SPR with the same
// concurrency, outside the service.
func bareTopupLatencies(b *testing.B, s *stack, n, clients int) []time.Duration {
	b.Helper()
	c, err := carrier.New(carrier.Config{URL: s.spr.URL, User: "spr-user", Password: testPassword, CompanyID: "COMP1", Timeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	var (
		mu  sync.Mutex
		lat []time.Duration
		wg  sync.WaitGroup
		ids = make(chan int, n)
	)
	for i := range n {
		ids <- i
	}
	close(ids)
	for range clients {
		wg.Go(func() {
			for i := range ids {
				t0 := time.Now()
				_, err := c.Topup(context.Background(), carrier.TopupRequest{
					ExternalOperation: carrier.ExternalOperationPins, ExternalTransactionID: carrier.NewExternalTransactionID(),
					OfferID: "30", SubscriberID: fmt.Sprintf("59398%07d", i), Quantity: 1,
				})
				d := time.Since(t0)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
				if err != nil {
					b.Error(err)
				}
			}
		})
	}
	wg.Wait()
	return lat
}

func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
