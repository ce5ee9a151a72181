package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/platform/integrations/internal/apidoc"
	"github.com/platform/integrations/internal/apidoc/apitest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// The served document is a valid OpenAPI 3.1 document, every operation has an id and a summary
// (for generated clients and the docs page), and it lists exactly the routes the router serves.
func TestOpenAPIDocument(t *testing.T) {
	env := newTestEnv(t, storagetest.SQLite(t))
	r := env.do(http.MethodGet, apidoc.PathJSON, nil, "")
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s = %d", apidoc.PathJSON, r.Status)
	}
	// The profiler is off in tests; the Redoc bundle is the docs page's asset, not API.
	apitest.CheckServed(t, r.Body, env.srv.app, "/debug/pprof", apidoc.PathBundle)
	if y := env.do(http.MethodGet, apidoc.PathYAML, nil, ""); y.Status != http.StatusOK || !bytes.Equal(y.Body, openapiYAML) {
		t.Errorf("GET %s = %d, not the embedded document", apidoc.PathYAML, y.Status)
	}
	if idx := env.do(http.MethodGet, "/", nil, ""); idx.Status != http.StatusOK || !strings.Contains(string(idx.Body), `href="/docs"`) {
		t.Errorf("GET / = %d %s, want a link to /docs", idx.Status, idx.Body)
	}
}

// The contract check catches drift: a real answer with one field renamed fails it.
func TestContractCatchesARenamedAnswerField(t *testing.T) {
	env := newTestEnv(t, storagetest.SQLite(t))
	body := map[string]any{"codigo_empresa": "000598", "identificacion": testIdentificacion, "numero_tarjeta": testTarjeta}
	r := env.consumo("cupo", body)
	if r.Status != http.StatusOK {
		t.Fatalf("cupo = %d %s", r.Status, r.Body)
	}
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, env.URL+consumoPrefix+"cupo", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", env.userToken())
	c := contractOf(t)
	if err := c.Check(req, raw, apitest.Answer{Status: r.Status, Header: r.Header, Body: r.Body}); err != nil {
		t.Fatalf("the real answer fails the contract: %v", err)
	}
	renamed := bytes.Replace(r.Body, []byte(`"nCupoDisponible":`), []byte(`"nCupoDisponibleTotal":`), 1)
	if bytes.Equal(renamed, r.Body) {
		t.Fatalf("answer has no nCupoDisponible: %s", r.Body)
	}
	err := c.Check(req, raw, apitest.Answer{Status: r.Status, Header: r.Header, Body: renamed})
	if err == nil || !strings.Contains(err.Error(), "nCupoDisponible") {
		t.Fatalf("renamed nCupoDisponible not caught: %v", err)
	}
}

// /docs renders every operation of the document in a real browser, without a console error.
func TestDocsPage(t *testing.T) {
	env := newTestEnv(t, storagetest.SQLite(t))
	contractOf(t).CheckDocsPage(t, env.URL)
}
