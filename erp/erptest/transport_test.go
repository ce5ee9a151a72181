package erptest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/upstream"
)

// Over Transport (the credit service's development wiring, no listener) the client sees what it
// sees on the network.
func TestTransport(t *testing.T) {
	tests := []struct {
		name     string
		reaction erptest.Reaction
		check    func(t *testing.T, res *erp.LookupResult, err error)
	}{
		{"answer", erptest.Process(), func(t *testing.T, res *erp.LookupResult, err error) {
			if err != nil || !res.Found || res.Client.CodigoCliente != erptest.CodigoClienteExisting {
				t.Errorf("lookup = %+v, %v; want the existing client", res, err)
			}
		}},
		{"refusal", erptest.BusinessError("no"), func(t *testing.T, _ *erp.LookupResult, err error) {
			if upstream.KindOf(err) != upstream.Rejected {
				t.Errorf("err = %v, want a refusal", err)
			}
		}},
		{"hang", erptest.Hang(), func(t *testing.T, _ *erp.LookupResult, err error) {
			if !erp.IsTimeout(err) || upstream.KindOf(err) != upstream.OutcomeUnknown {
				t.Errorf("err = %v, want the client's timeout", err)
			}
		}},
		{"drop", erptest.Drop(), func(t *testing.T, _ *erp.LookupResult, err error) {
			if !errors.Is(err, erptest.ErrConnectionDropped) || erp.IsTimeout(err) || upstream.KindOf(err) != upstream.OutcomeUnknown {
				t.Errorf("err = %v (kind %v), want a dropped connection, outcome unknown", err, upstream.KindOf(err))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := erptest.NewFake()
			t.Cleanup(fake.Close)
			c, err := erp.New(erp.Config{BaseURL: erptest.MockURL, Timeout: 300 * time.Millisecond}, erp.WithHTTPClient(fake.HTTPClient()))
			if err != nil {
				t.Fatal(err)
			}
			fake.Script(erp.OpLookupClient, tt.reaction)
			res, err := c.LookupClient(t.Context(), "000598", erptest.IdentificacionExisting)
			tt.check(t, res, err)
			if fake.Calls(erp.OpLookupClient) != 1 {
				t.Errorf("calls = %d, want 1", fake.Calls(erp.OpLookupClient))
			}
		})
	}
}
