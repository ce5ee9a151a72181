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
	s := newStack(t, storagetest.SQLite(t), nil)
	r := s.do(http.MethodGet, apidoc.PathJSON, nil, nil).expect(t, http.StatusOK)
	// The profiler is off in tests; the Redoc bundle is the docs page's asset, not API.
	apitest.CheckServed(t, []byte(r.raw), s.instances[0].srv.app, "/debug/pprof", apidoc.PathBundle)
	if y := s.do(http.MethodGet, apidoc.PathYAML, nil, nil); y.status != http.StatusOK || y.raw != string(openapiYAML) {
		t.Errorf("GET %s = %d, not the embedded document", apidoc.PathYAML, y.status)
	}
	if idx := s.do(http.MethodGet, "/", nil, nil); idx.status != http.StatusOK || !strings.Contains(idx.raw, `href="/docs"`) {
		t.Errorf("GET / = %d %s, want a link to /docs", idx.status, idx.raw)
	}
}

// The contract check catches drift: a real answer with one field renamed fails it.
func TestContractCatchesARenamedAnswerField(t *testing.T) {
	s := newStack(t, storagetest.SQLite(t), nil)
	op := newUser("op", PermCreate, PermView)
	headers := op.recharge(t)
	body := rechargeBodyFor("593991234567")
	a := s.do(http.MethodPost, rechargePath, body, headers).expect(t, http.StatusCreated)
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, s.instances[0].url+rechargePath, bytes.NewReader(raw))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	c, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	ans := apitest.Answer{Status: a.status, Header: a.header, Body: []byte(a.raw)}
	if err := c.Check(req, raw, ans); err != nil {
		t.Fatalf("the real answer fails the contract: %v", err)
	}
	ans.Body = bytes.Replace(ans.Body, []byte(`"external_transaction_id":`), []byte(`"externalTransactionId":`), 1)
	if string(ans.Body) == a.raw {
		t.Fatalf("answer has no external_transaction_id: %s", a.raw)
	}
	if err := c.Check(req, raw, ans); err == nil || !strings.Contains(err.Error(), "external_transaction_id") {
		t.Fatalf("renamed external_transaction_id not caught: %v", err)
	}
}

// /docs renders every operation of the document in a real browser, without a console error.
func TestDocsPage(t *testing.T) {
	s := newStack(t, storagetest.SQLite(t), nil)
	c, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	c.CheckDocsPage(t, s.instances[0].url)
}
