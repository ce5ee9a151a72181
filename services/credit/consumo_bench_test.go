package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// BenchmarkConsumoFlow runs authorization -> OTP -> confirmation flows one after the other
// through the running service (real loopback listener, creditsystemtest on loopback), and after
// each flow the two upstream calls of a flow (GrabarAutorizacion, GrabarConsumo) straight
// through the SDK against the same fake. It reports flows per second and, per request, the
// median and p99 of the service beside the bare SDK call; added_* is the difference, which is
// what the service costs on top of the creditsystem (HTTP, validation, JWT, database writes).
//
//	TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	  go test -run '^$' -bench BenchmarkConsumoFlow -benchtime 2000x ./services/credit
func BenchmarkConsumoFlow(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			env := newBenchEnv(b, engine)
			sdk := env.sdkClient(b)
			token := env.userToken()
			client := &http.Client{Timeout: 10 * time.Second}
			var svcAuth, svcOTP, svcConf, sdkAuth, sdkConf []time.Duration
			var flowTime time.Duration
			b.ResetTimer()
			for i := range b.N {
				card := benchCard("1", i)
				start := time.Now()
				id := benchAutorizar(b, env, client, token, card, &svcAuth)
				benchPost(b, env, client, token, "otp", map[string]any{"autorizacion_id": id, "otp": "481516"}, &svcOTP)
				benchPost(b, env, client, token, "confirmar", benchConfirmar(id, card), &svcConf)
				flowTime += time.Since(start)

				b.StopTimer()
				benchSDKPair(b, sdk, benchCard("2", i), &sdkAuth, &sdkConf)
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/flowTime.Seconds(), "flows/s")
			reportLatency(b, "autorizacion", svcAuth, sdkAuth)
			reportLatency(b, "confirmar", svcConf, sdkConf)
			reportLatency(b, "otp", svcOTP, nil)
		})
	}
}

// BenchmarkConsumoFlowParallel is the same flow from concurrent callers: throughput only.
//
//	go test -run '^$' -bench BenchmarkConsumoFlowParallel -benchtime 2000x ./services/credit
func BenchmarkConsumoFlowParallel(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			env := newBenchEnv(b, engine)
			token := env.userToken()
			client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			var seq atomic.Int64
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					card := benchCard("3", int(seq.Add(1)))
					id := benchAutorizar(b, env, client, token, card, nil)
					benchPost(b, env, client, token, "otp", map[string]any{"autorizacion_id": id, "otp": "481516"}, nil)
					benchPost(b, env, client, token, "confirmar", benchConfirmar(id, card), nil)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "flows/s")
		})
	}
}

func benchConfirmar(id, card string) map[string]any {
	body := confirmarBody(id, "F-"+card)
	body["monto_facturado"] = "25.00"
	return body
}

func newBenchEnv(b *testing.B, engine string) *testEnv {
	var tg storagetest.Target
	if engine == "sqlite" {
		tg = storagetest.SQLite(b)
	} else {
		tg = storagetest.Postgres(b)
	}
	return newTestEnv(b, tg, withEnv("CREDITSYSTEM_TIMEOUT", "5"))
}

func (e *testEnv) sdkClient(b *testing.B) *creditsystem.Client {
	cfg := e.cs.Config()
	cfg.Timeout = 5 * time.Second
	c, err := creditsystem.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// benchCard is a card of its own per flow: the fake's 5000.00 line would run out otherwise.
func benchCard(prefix string, i int) string { return fmt.Sprintf("9%s%08d", prefix, i) }

func benchAutorizar(b *testing.B, env *testEnv, client *http.Client, token, card string, lat *[]time.Duration) string {
	body := autorizacionBody("25.00")
	body["identificacion"], body["numero_tarjeta"] = card, card
	raw := benchPost(b, env, client, token, "autorizacion", body, lat)
	var m struct {
		ID string `json:"autorizacion_id"`
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.ID == "" {
		b.Fatalf("autorizacion answer %s", raw)
	}
	return m.ID
}

func benchPost(b *testing.B, env *testEnv, client *http.Client, token, endpoint string, body any, lat *[]time.Duration) []byte {
	start := time.Now()
	status, raw, err := env.postConsumo(client, endpoint, token, body)
	if lat != nil {
		*lat = append(*lat, time.Since(start))
	}
	if err != nil || status != http.StatusOK {
		b.Fatalf("%s = %d %s %v", endpoint, status, raw, err)
	}
	return raw
}

// benchSDKPair makes the flow's two upstream calls directly with the SDK.
func benchSDKPair(b *testing.B, sdk *creditsystem.Client, card string, auth, conf *[]time.Duration) {
	ctx := b.Context()
	start := time.Now()
	res, err := sdk.GrabarAutorizacion(ctx, creditsystem.GrabarAutorizacionRequest{
		Identificacion: card, NumeroTarjeta: card, CodigoProducto: "001", CodigoTipoCupo: "001", CodigoTipoOperacion: "001",
		Plazo: 3, Monto: decimal.RequireFromString("25.00"), PuntoVenta: "PV-QUITO-01",
		Articulos: []creditsystem.Articulo{{TextoArticulo: "Refrigeradora", Cantidad: 1, Precio: decimal.RequireFromString("25.00"), Caracteristicas: "COLOR:BLANCO"}},
	})
	*auth = append(*auth, time.Since(start))
	if err != nil {
		b.Fatal(err)
	}
	start = time.Now()
	_, err = sdk.GrabarConsumo(ctx, creditsystem.GrabarConsumoRequest{
		NumeroAutorizacion: *res.NumeroAutorizacion, NumeroFactura: "S-" + card, MontoFacturado: decimal.RequireFromString("25.00"),
		FechaFactura: creditsystem.NewDate(2026, time.January, 15), CodigoProducto: "001", CodigoTipoCupo: "001", CodigoTipoOperacion: "001",
		Identificacion: card, NumeroTarjeta: card, Plazo: 3, Monto: decimal.RequireFromString("25.00"), Otp: "481516",
	})
	*conf = append(*conf, time.Since(start))
	if err != nil {
		b.Fatal(err)
	}
}

func benchPercentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func benchMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func reportLatency(b *testing.B, name string, svc, sdk []time.Duration) {
	if len(svc) == 0 {
		return
	}
	p50, p99 := benchPercentile(svc, 50), benchPercentile(svc, 99)
	b.ReportMetric(benchMS(p50), name+"_p50_ms")
	b.ReportMetric(benchMS(p99), name+"_p99_ms")
	if len(sdk) == 0 {
		return
	}
	s50, s99 := benchPercentile(sdk, 50), benchPercentile(sdk, 99)
	b.ReportMetric(benchMS(s50), name+"_sdk_p50_ms")
	b.ReportMetric(benchMS(s99), name+"_sdk_p99_ms")
	b.ReportMetric(benchMS(p50-s50), name+"_added_p50_ms")
	b.ReportMetric(benchMS(p99-s99), name+"_added_p99_ms")
}
