package carriertest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
)

var update = flag.Bool("update", false, "rewrite testdata/fixtures from the fake")

// record runs one scenario against a fresh in-process fake and returns the
// answer exactly as the client received it.
func record(t *testing.T, s Scenario) (int, []byte) {
	t.Helper()
	fake := NewFake(WithCredentials("spr-user", "spr-password", "1790000000001"))
	defer fake.Close()
	cfg := carrier.Config{URL: MockURL, User: "spr-user", Password: "spr-password", CompanyID: "1790000000001", Timeout: 2 * time.Second}
	if s == QueryInvalidCredentials || s == InventoryInvalidCredentials {
		cfg.Password = "not-the-password"
	}
	c, err := carrier.New(cfg, carrier.WithHTTPClient(fake.HTTPClient()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	topup := func(id, offer, subscriber string) (*carrier.Result, error) {
		return c.Topup(ctx, carrier.TopupRequest{
			ExternalOperation: carrier.ExternalOperationPins, ExternalTransactionID: id,
			OfferID: offer, SubscriberID: subscriber, Quantity: 1,
		})
	}
	query := func(id, offer string) (*carrier.Result, error) {
		return c.QueryRecharge(ctx, carrier.QueryRequest{ExternalTransactionID: id, OfferID: offer})
	}
	var res *carrier.Result
	switch s {
	case TopupSuccess:
		res, _ = topup("FIXTURE0001", "31", "593987654321")
	case TopupNoBalance:
		res, _ = topup("FIXTURE0002", "31", SubscriberNoBalance)
	case TopupInvalidNumber:
		res, _ = topup("FIXTURE0003", "31", "5931234")
	case TopupIPNotAuthorized:
		res, _ = topup("FIXTURE0004", "31", SubscriberIPNotAuthorized)
	case QuerySuccess:
		mustTopup(t, topup, "FIXTURE0005", "30")
		res, _ = query("FIXTURE0005", "30")
	case QueryNotFound:
		res, _ = query("FIXTURE0006", "30")
	case QueryWrongProduct:
		mustTopup(t, topup, "FIXTURE0007", "30")
		res, _ = query("FIXTURE0007", "31")
	case QueryInvalidCredentials:
		res, _ = query("FIXTURE0008", "30")
	case InventorySuccess, InventoryInvalidCredentials:
		var inv *carrier.Inventory
		inv, _ = c.Inventory(ctx)
		res = &inv.Result
	default:
		t.Fatalf("no recipe for scenario %q", s)
	}
	return res.Exchange.HTTPStatus, res.Exchange.Response
}

func mustTopup(t *testing.T, topup func(id, offer, subscriber string) (*carrier.Result, error), id, offer string) {
	t.Helper()
	if _, err := topup(id, offer, "593987654321"); err != nil {
		t.Fatal(err)
	}
}

// TestFixtures proves the httpmock fixtures are what the fake answers today,
// so they cannot drift from the fake (and, through the fake's own tests,
// from the specification).
func TestFixtures(t *testing.T) {
	for _, s := range Scenarios() {
		t.Run(string(s), func(t *testing.T) {
			status, got := record(t, s)
			if status != s.Status() {
				t.Fatalf("fake answered HTTP %d, scenario says %d", status, s.Status())
			}
			if *update {
				p := s.path()
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := Fixture(s)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("fixture %s is stale (run with -update):\n got %s\nwant %s", s, got, want)
			}
		})
	}
}
