package carrier_test

import (
	"bytes"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed (run go test -run TestGolden -update if intended):\n got %s\nwant %s", path, got, want)
	}
}

// TestGoldenRequests pins, byte for byte, the three documents that go on
// the wire and the audit copies the client returns for them.
func TestGoldenRequests(t *testing.T) {
	fake := carriertest.NewFake(carriertest.WithCredentials(sprUser, sprPassword, sprCompany))
	defer fake.Close()
	tap := &wireTap{base: fake.Transport()}
	c := newClient(t, config(carriertest.MockURL, time.Second), carrier.WithHTTPClient(&http.Client{Transport: tap}))

	tests := []struct {
		function string
		call     func() (*carrier.Result, error)
	}{
		{carrier.FunctionTopup, func() (*carrier.Result, error) {
			return c.Topup(t.Context(), carrier.TopupRequest{
				ExternalOperation:     carrier.ExternalOperationData,
				ExternalTransactionID: "01JAYZ6X8M4Q0S2V3W5Y7Z9A1B",
				OfferID:               "150",
				SubscriberID:          "593987654321",
				Quantity:              1,
			})
		}},
		{carrier.FunctionQueryRecharge, func() (*carrier.Result, error) {
			return c.QueryRecharge(t.Context(), carrier.QueryRequest{ExternalTransactionID: "01JAYZ6X8M4Q0S2V3W5Y7Z9A1B", OfferID: "150"})
		}},
		{carrier.FunctionQueryInventory, func() (*carrier.Result, error) {
			inv, err := c.Inventory(t.Context())
			return &inv.Result, err
		}},
	}
	for i, tt := range tests {
		t.Run(tt.function, func(t *testing.T) {
			res, err := tt.call()
			if err != nil {
				t.Fatal(err)
			}
			wire := tap.bodies[i]
			golden(t, tt.function+".xml", wire)
			golden(t, tt.function+".audit.xml", res.Exchange.Request)
			// The audit copy is the wire document with only the password
			// value replaced.
			masked := bytes.ReplaceAll(wire, []byte(sprPasswordEscaped), []byte("********"))
			if !bytes.Equal(res.Exchange.Request, masked) {
				t.Errorf("audit copy differs from the wire beyond the password:\n%s\n%s", res.Exchange.Request, wire)
			}
		})
	}
}
