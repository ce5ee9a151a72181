package erp_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest/fixtures"
)

// The client's own cost per call (resty, encoding, decoding), without a network: httpmock
// replays the recorded answers.
func benchClient(b *testing.B) *erp.Client {
	mt := mockTransport()
	cfg := erp.Config{BaseURL: "http://erp.test", Timeout: 2 * time.Second}
	fixtures.RegisterScenario(mt, cfg, fixtures.ScenarioFound)
	c, err := erp.New(cfg, erp.WithHTTPClient(&http.Client{Transport: mt}))
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func BenchmarkLookupClient(b *testing.B) {
	c := benchClient(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.LookupClient(b.Context(), "000598", "0999999999"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSyncClient(b *testing.B) {
	c := benchClient(b)
	l1 := decimal.RequireFromString("1500.50")
	p := erp.ClientPayload{CodigoEmpresa: "000598", NombreCliente: "MARIA PEREZ", Identificacion: "0102030405",
		Email: "m@p.ec", Telefono1: "0991234567", LimiteCredito1: &l1,
		ExtraFields: json.RawMessage(`{"valor_1":12.50,"fecha_1":"2024-02-29","booleano_1":1,"texto_1":"abc"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.SyncClient(b.Context(), erp.OperationCreate, p); err != nil {
			b.Fatal(err)
		}
	}
}
