package erptest

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/jarcoal/httpmock"

	"github.com/platform/integrations/erp"
)

// The answers the httpmock responders replay. They are recorded from the Fake by
// TestFixtures (go test ./erp/erptest -run TestFixtures -update), so they cannot drift
// from what the Fake, and the wire format documented in erp's doc.go, say.
//
//go:embed testdata/fixtures
var fixtures embed.FS

// Fixture names, each a file testdata/fixtures/<name>.json (undecodable: .html).
const (
	FixtureLookupFound    = "lookup_found"     // 0999999999 under codigo_empresa 000598
	FixtureLookupNotFound = "lookup_not_found" // 0102030405
	FixtureLookupErrorAPI = "lookup_error_api"
	FixtureLookupHTTP500  = "lookup_http_500"
	FixtureSyncCreated    = "sync_created" // codigo_cliente C-0102030405, operacion 0
	FixtureSyncUpdated    = "sync_updated" // codigo_cliente C-0102030405, operacion 1
	FixtureSyncErrorAPI   = "sync_error_api"
	FixtureSyncHTTP500    = "sync_http_500"
	FixtureUndecodable    = "undecodable"
)

// Fixture returns a recorded answer body.
func Fixture(name string) []byte {
	file := "testdata/fixtures/" + name + ".json"
	if name == FixtureUndecodable {
		file = "testdata/fixtures/" + name + ".html"
	}
	b, err := fixtures.ReadFile(file)
	if err != nil {
		panic(fmt.Sprintf("erptest: no fixture %q", name))
	}
	return b
}

// Scenario selects what the httpmock responders answer.
type Scenario string

const (
	// ScenarioSuccess: the lookup finds nothing; a sync is created (operacion 0) or updated
	// (operacion 1) with codigo_cliente C-0102030405.
	ScenarioSuccess Scenario = "success"
	// ScenarioFound: the lookup finds C-0999999999; a sync as ScenarioSuccess.
	ScenarioFound Scenario = "found"
	// ScenarioErrorAPI: HTTP 200 with error_api true.
	ScenarioErrorAPI Scenario = "error_api"
	// ScenarioServerError: HTTP 500 with the ERP's JSON error.
	ScenarioServerError Scenario = "http_500"
	// ScenarioUndecodable: HTTP 200 with an HTML page.
	ScenarioUndecodable Scenario = "undecodable"
	// ScenarioRefused: the connection fails (httpmock.ConnectionFailure).
	ScenarioRefused Scenario = "refused"
	// ScenarioTimeout: no answer until the request's context ends.
	ScenarioTimeout Scenario = "timeout"
)

// RegisterResponders registers ScenarioSuccess for both operations on mt, at the URLs cfg
// gives (empty paths take the erp defaults).
func RegisterResponders(mt *httpmock.MockTransport, cfg erp.Config) {
	RegisterScenario(mt, cfg, ScenarioSuccess)
}

// RegisterScenario registers s for both operations on mt. To mix scenarios, register
// Responder(op, s) for one URL yourself after this call.
func RegisterScenario(mt *httpmock.MockTransport, cfg erp.Config, s Scenario) {
	lookup, clients := urls(cfg)
	mt.RegisterResponder(http.MethodPost, lookup, Responder(erp.OpLookupClient, s))
	mt.RegisterResponder(http.MethodPost, clients, Responder(erp.OpSyncClient, s))
}

// LookupURL and ClientsURL are the addresses the erp client calls for cfg.
func LookupURL(cfg erp.Config) string  { l, _ := urls(cfg); return l }
func ClientsURL(cfg erp.Config) string { _, c := urls(cfg); return c }

func urls(cfg erp.Config) (string, string) {
	lookup, clients := cfg.LookupPath, cfg.ClientsPath
	if lookup == "" {
		lookup = erp.DefaultLookupPath
	}
	if clients == "" {
		clients = erp.DefaultClientsPath
	}
	base := cfg.BaseURL
	for len(base) > 0 && base[len(base)-1] == '/' {
		base = base[:len(base)-1]
	}
	return base + lookup, base + clients
}

// Responder answers op (erp.OpLookupClient or erp.OpSyncClient) as scenario s says.
func Responder(op string, s Scenario) httpmock.Responder {
	switch s {
	case ScenarioRefused:
		return httpmock.ConnectionFailure
	case ScenarioTimeout:
		return func(req *http.Request) (*http.Response, error) {
			<-req.Context().Done()
			return nil, req.Context().Err()
		}
	case ScenarioUndecodable:
		return fixtureResponder(http.StatusOK, FixtureUndecodable, "text/html; charset=utf-8")
	}
	lookupOp := op == erp.OpLookupClient
	pick := func(lookupName, syncName string) string {
		if lookupOp {
			return lookupName
		}
		return syncName
	}
	switch s {
	case ScenarioErrorAPI:
		return fixtureResponder(http.StatusOK, pick(FixtureLookupErrorAPI, FixtureSyncErrorAPI), "")
	case ScenarioServerError:
		return fixtureResponder(http.StatusInternalServerError, pick(FixtureLookupHTTP500, FixtureSyncHTTP500), "")
	case ScenarioFound:
		if lookupOp {
			return fixtureResponder(http.StatusOK, FixtureLookupFound, "")
		}
	case ScenarioSuccess:
		if lookupOp {
			return fixtureResponder(http.StatusOK, FixtureLookupNotFound, "")
		}
	default:
		panic(fmt.Sprintf("erptest: unknown scenario %q", s))
	}
	// A sync: created or updated according to the request's operacion.
	return func(req *http.Request) (*http.Response, error) {
		var p struct {
			Operacion int `json:"operacion"`
		}
		if req.Body != nil {
			_ = json.NewDecoder(req.Body).Decode(&p)
		}
		name := FixtureSyncCreated
		if p.Operacion == 1 {
			name = FixtureSyncUpdated
		}
		return fixtureResponder(http.StatusOK, name, "")(req)
	}
}

func fixtureResponder(status int, name, contentType string) httpmock.Responder {
	body := Fixture(name)
	if contentType == "" {
		contentType = "application/json; charset=utf-8"
	}
	return httpmock.NewBytesResponder(status, body).HeaderSet(http.Header{"Content-Type": {contentType}})
}
