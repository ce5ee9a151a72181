package creditsystemtest

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jarcoal/httpmock"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/internal/cartera"
	"github.com/platform/integrations/creditsystem/internal/central"
)

// Scenario names a set of recorded answers, one per operation.
type Scenario string

// The recorded scenarios. Every file was produced by this package's fake (see
// TestFixturesAreTheFakesAnswers, which regenerates them with -update).
const (
	// ScenarioSuccess: a customer with a 5000.00 line: credit-line query, financing,
	// authorization, consumption, debt, payment and the reversals all succeed.
	ScenarioSuccess Scenario = "success"
	// ScenarioCardNotFound: every operation answers nNumeroError 2 (ErrCardNotFound).
	ScenarioCardNotFound Scenario = "card-not-found"
	// ScenarioBusinessError: every operation answers lError true, nNumeroError 99.
	ScenarioBusinessError Scenario = "business-error"
	// ScenarioFault: every operation answers a SOAP fault in an HTTP 500.
	ScenarioFault Scenario = "fault"
)

// Scenarios lists the recorded scenarios.
func Scenarios() []Scenario {
	return []Scenario{ScenarioSuccess, ScenarioCardNotFound, ScenarioBusinessError, ScenarioFault}
}

//go:embed testdata/fixtures
var fixtures embed.FS

const fixturesDir = "testdata/fixtures"

type fixture struct {
	status int
	body   []byte
}

// loadScenario reads testdata/fixtures/<scenario>/<Operation>.<status>.xml.
func loadScenario(s Scenario) (map[string]fixture, error) {
	dir := path.Join(fixturesDir, string(s))
	entries, err := fs.ReadDir(fixtures, dir)
	if err != nil {
		return nil, fmt.Errorf("creditsystemtest: unknown scenario %q", s)
	}
	out := map[string]fixture{}
	for _, e := range entries {
		parts := strings.Split(e.Name(), ".")
		if len(parts) != 3 || parts[2] != "xml" {
			continue
		}
		status, err := strconv.Atoi(parts[1])
		if err != nil {
			return nil, fmt.Errorf("creditsystemtest: fixture %s: bad status", e.Name())
		}
		body, err := fixtures.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out[parts[0]] = fixture{status: status, body: body}
	}
	for _, op := range Operations() {
		if _, ok := out[op]; !ok {
			return nil, fmt.Errorf("creditsystemtest: scenario %q has no answer for %s", s, op)
		}
	}
	return out, nil
}

// RegisterResponders registers on mt, for POST cfg.CarteraURL and POST cfg.CentralURL, a
// responder per URL that answers every operation of that service (chosen by SOAPAction) with
// the recorded answer of scenario; the answers are rewritten to cfg.SOAPNamespace. A request
// whose SOAPAction does not belong to the URL gets WCF's ActionNotSupported fault. Use one
// MockTransport per test on the client's injected *http.Client, never httpmock's global one.
// The responders expect the WSDL contract names (IServicioCar, IServicioCentral): a client
// built with creditsystem.WithCentralContract gets ActionNotSupported from them.
func RegisterResponders(mt *httpmock.MockTransport, cfg creditsystem.Config, scenario Scenario) error {
	answers, err := loadScenario(scenario)
	if err != nil {
		return err
	}
	ns := cfg.SOAPNamespace
	if ns == "" {
		ns = creditsystem.DefaultSOAPNamespace
	}
	if cfg.CarteraURL == "" || cfg.CentralURL == "" {
		return fmt.Errorf("creditsystemtest: RegisterResponders needs CarteraURL and CentralURL")
	}
	byURL := map[string][]string{}
	byURL[cfg.CarteraURL] = append(byURL[cfg.CarteraURL], cartera.WSDLPortType)
	byURL[cfg.CentralURL] = append(byURL[cfg.CentralURL], central.WSDLPortType)
	defaultNS := []byte(`xmlns="` + esc(cartera.WSDLNamespace) + `"`)
	configuredNS := []byte(`xmlns="` + esc(ns) + `"`)
	for url, portTypes := range byURL {
		mt.RegisterResponder(http.MethodPost, url, func(req *http.Request) (*http.Response, error) {
			action := strings.Trim(req.Header.Get("SOAPAction"), `"`)
			op := action[strings.LastIndexByte(action, '/')+1:]
			portType, _, known := serviceOf(op)
			var buf bytes.Buffer
			if !known || action != soapAction(ns, portType, op) || !slices.Contains(portTypes, portType) {
				writeFault(&buf, "a:ActionNotSupported", fmt.Sprintf("The message with Action '%s' cannot be processed at the receiver, due to a ContractFilter mismatch at the EndpointDispatcher.", action))
				return xmlResponse(http.StatusInternalServerError, buf.Bytes()), nil
			}
			a := answers[op]
			return xmlResponse(a.status, bytes.ReplaceAll(a.body, defaultNS, configuredNS)), nil
		})
	}
	return nil
}

func xmlResponse(status int, body []byte) *http.Response {
	res := httpmock.NewBytesResponse(status, body)
	res.Header.Set("Content-Type", contentTypeWS)
	return res
}
