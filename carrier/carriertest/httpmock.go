package carriertest

import (
	"embed"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/jarcoal/httpmock"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/internal/umsprot"
)

// Scenario names one recorded answer of one carrier function, for
// RegisterResponders. The answers are files under testdata/fixtures/ that
// the fake itself produced (go test ./carrier/carriertest -run
// TestFixtures -update rewrites them).
type Scenario string

// Recorded scenarios. The HTTP status is 200 unless noted.
const (
	TopupSuccess         Scenario = carrier.FunctionTopup + "/success"
	TopupNoBalance       Scenario = carrier.FunctionTopup + "/no-balance"        // STATUS=ERROR, ID_CODIGO 1
	TopupInvalidNumber   Scenario = carrier.FunctionTopup + "/invalid-number"    // STATUS=ERROR, ID_CODIGO 3
	TopupIPNotAuthorized Scenario = carrier.FunctionTopup + "/ip-not-authorized" // SOAP fault 350, HTTP 500

	QuerySuccess            Scenario = carrier.FunctionQueryRecharge + "/success"
	QueryNotFound           Scenario = carrier.FunctionQueryRecharge + "/not-found"           // ID_CODIGO 1
	QueryWrongProduct       Scenario = carrier.FunctionQueryRecharge + "/wrong-product"       // ID_CODIGO 1
	QueryInvalidCredentials Scenario = carrier.FunctionQueryRecharge + "/invalid-credentials" // ID_CODIGO 1

	InventorySuccess            Scenario = carrier.FunctionQueryInventory + "/success"
	InventoryInvalidCredentials Scenario = carrier.FunctionQueryInventory + "/invalid-credentials" // ID_CODIGO 1
)

// Scenarios lists every recorded scenario.
func Scenarios() []Scenario {
	return []Scenario{
		TopupSuccess, TopupNoBalance, TopupInvalidNumber, TopupIPNotAuthorized,
		QuerySuccess, QueryNotFound, QueryWrongProduct, QueryInvalidCredentials,
		InventorySuccess, InventoryInvalidCredentials,
	}
}

// Function is the carrier function the scenario answers.
func (s Scenario) Function() string {
	fn, _, _ := strings.Cut(string(s), "/")
	return fn
}

// Status is the HTTP status the scenario answers with.
func (s Scenario) Status() int {
	if s == TopupIPNotAuthorized {
		return http.StatusInternalServerError
	}
	return http.StatusOK
}

func (s Scenario) path() string { return "testdata/fixtures/" + string(s) + ".xml" }

//go:embed testdata/fixtures
var fixtures embed.FS

// Fixture returns the recorded answer body of a scenario.
func Fixture(s Scenario) ([]byte, error) {
	b, err := fixtures.ReadFile(s.path())
	if err != nil {
		return nil, fmt.Errorf("carriertest: no fixture for scenario %q", s)
	}
	return b, nil
}

// RegisterResponders registers on mt, for POSTs to url, a responder that
// answers each carrier function with a recorded answer: the success
// scenario of every function, except where one of scenarios names another
// for that function. The responder reads the request's exec_req to pick the
// function; a request that is not an umsprot document gets HTTP 400.
//
// It panics on an unknown scenario or two for one function, as httpmock's
// own registrations do on misuse: both are mistakes in the test.
func RegisterResponders(mt *httpmock.MockTransport, url string, scenarios ...Scenario) {
	chosen := map[string]Scenario{
		carrier.FunctionTopup:          TopupSuccess,
		carrier.FunctionQueryRecharge:  QuerySuccess,
		carrier.FunctionQueryInventory: InventorySuccess,
	}
	overridden := map[string]bool{}
	for _, s := range scenarios {
		if _, err := Fixture(s); err != nil {
			panic(err)
		}
		if overridden[s.Function()] {
			panic(fmt.Sprintf("carriertest: two scenarios for %s", s.Function()))
		}
		overridden[s.Function()] = true
		chosen[s.Function()] = s
	}
	bodies := map[string][]byte{}
	for fn, s := range chosen {
		bodies[fn], _ = Fixture(s)
	}
	mt.RegisterResponder(http.MethodPost, url, func(req *http.Request) (*http.Response, error) {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		r, err := umsprot.DecodeRequest(b)
		if err != nil {
			return httpmock.NewStringResponse(http.StatusBadRequest, err.Error()), nil
		}
		s, ok := chosen[r.Function]
		if !ok {
			return httpmock.NewStringResponse(http.StatusBadRequest, "unknown function "+r.Function), nil
		}
		resp := httpmock.NewBytesResponse(s.Status(), bodies[r.Function])
		resp.Header.Set("Content-Type", "text/xml; charset=utf-8")
		return resp, nil
	})
}
