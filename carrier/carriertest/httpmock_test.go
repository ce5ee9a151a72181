package carriertest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
)

const mockedURL = "https://spr.carrier.example/umsprot"

func mockedClient(t testing.TB, scenarios ...carriertest.Scenario) (*carrier.Client, *httpmock.MockTransport) {
	mt := httpmock.NewMockTransport()
	carriertest.RegisterResponders(mt, mockedURL, scenarios...)
	c, err := carrier.New(carrier.Config{URL: mockedURL, User: "u", Password: "secret-pw", CompanyID: "c", Timeout: time.Second},
		carrier.WithHTTPClient(&http.Client{Transport: mt}))
	if err != nil {
		t.Fatal(err)
	}
	return c, mt
}

var anyTopup = carrier.TopupRequest{ExternalOperation: carrier.ExternalOperationPins, ExternalTransactionID: "HM-1", OfferID: "31", SubscriberID: "593987654321", Quantity: 1}

func TestRegisterResponders(t *testing.T) {
	tests := []struct {
		scenario carriertest.Scenario
		call     func(context.Context, *carrier.Client) error
		outcome  string
		check    func(error) bool
	}{
		{carriertest.TopupSuccess, topupCall, carrier.OutcomeSuccess, nil},
		{carriertest.TopupNoBalance, topupCall, carrier.OutcomeFailed, codeIs("1")},
		{carriertest.TopupInvalidNumber, topupCall, carrier.OutcomeFailed, codeIs("3")},
		{carriertest.TopupIPNotAuthorized, topupCall, carrier.OutcomeUnavailable, func(err error) bool { return errors.Is(err, carrier.ErrIPNotAuthorized) }},
		{carriertest.QuerySuccess, queryCall, carrier.OutcomeSuccess, nil},
		{carriertest.QueryNotFound, queryCall, carrier.OutcomeFailed, codeIs("1")},
		{carriertest.QueryWrongProduct, queryCall, carrier.OutcomeFailed, codeIs("1")},
		{carriertest.QueryInvalidCredentials, queryCall, carrier.OutcomeFailed, codeIs("1")},
		{carriertest.InventorySuccess, inventoryCall, carrier.OutcomeSuccess, nil},
		{carriertest.InventoryInvalidCredentials, inventoryCall, carrier.OutcomeFailed, codeIs("1")},
	}
	if len(tests) != len(carriertest.Scenarios()) {
		t.Fatalf("%d scenarios tested of %d", len(tests), len(carriertest.Scenarios()))
	}
	for _, tt := range tests {
		t.Run(string(tt.scenario), func(t *testing.T) {
			c, mt := mockedClient(t, tt.scenario)
			err := tt.call(t.Context(), c)
			if got := carrier.Outcome(err); got != tt.outcome {
				t.Fatalf("Outcome = %s (%v), want %s", got, err, tt.outcome)
			}
			if tt.check != nil && !tt.check(err) {
				t.Errorf("unexpected %v", err)
			}
			if mt.GetTotalCallCount() != 1 {
				t.Errorf("%d calls", mt.GetTotalCallCount())
			}
			// The other functions keep their success answers.
			for fn, other := range calls {
				if fn == tt.scenario.Function() {
					continue
				}
				if err := other(t.Context(), c); err != nil {
					t.Errorf("another function failed: %v", err)
				}
			}
		})
	}
}

func TestRegisterRespondersMisuse(t *testing.T) {
	for name, scenarios := range map[string][]carriertest.Scenario{
		"unknown scenario":     {"sre_topupd_76186/nothing"},
		"two for one function": {carriertest.TopupNoBalance, carriertest.TopupSuccess},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			carriertest.RegisterResponders(httpmock.NewMockTransport(), mockedURL, scenarios...)
		})
	}
	_, mt := mockedClient(t)
	resp, err := (&http.Client{Transport: mt}).Post(mockedURL, "text/xml", strings.NewReader("not umsprot"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a request that is not umsprot got %d", resp.StatusCode)
	}
}

var calls = map[string]func(context.Context, *carrier.Client) error{
	carrier.FunctionTopup:          topupCall,
	carrier.FunctionQueryRecharge:  queryCall,
	carrier.FunctionQueryInventory: inventoryCall,
}

func topupCall(ctx context.Context, c *carrier.Client) error {
	_, err := c.Topup(ctx, anyTopup)
	return err
}

func queryCall(ctx context.Context, c *carrier.Client) error {
	_, err := c.QueryRecharge(ctx, carrier.QueryRequest{ExternalTransactionID: "HM-1", OfferID: "31"})
	return err
}

func inventoryCall(ctx context.Context, c *carrier.Client) error {
	_, err := c.Inventory(ctx)
	return err
}

func codeIs(code string) func(error) bool {
	return func(err error) bool {
		var be *carrier.Error
		return errors.As(err, &be) && be.Code == code
	}
}

func ExampleRegisterResponders() {
	mt := httpmock.NewMockTransport()
	carriertest.RegisterResponders(mt, "https://spr.carrier.example/umsprot", carriertest.TopupNoBalance)
	c, err := carrier.New(carrier.Config{URL: "https://spr.carrier.example/umsprot", Timeout: time.Second},
		carrier.WithHTTPClient(&http.Client{Transport: mt}))
	if err != nil {
		panic(err)
	}
	_, err = c.Topup(context.Background(), carrier.TopupRequest{
		ExternalOperation: carrier.ExternalOperationPins, ExternalTransactionID: "T1",
		OfferID: "31", SubscriberID: "593987654321", Quantity: 1,
	})
	var be *carrier.Error
	if errors.As(err, &be) {
		fmt.Println(carrier.Outcome(err), be.Code, be.Message)
	}
	inv, err := c.Inventory(context.Background()) // not overridden: success
	fmt.Println(err, len(inv.Items), inv.Items[0].OfferID, inv.Items[0].Available)
	fmt.Println(mt.GetTotalCallCount())
	// Output:
	// failed 1 no balance
	// <nil> 4 31 1000
	// 2
}
