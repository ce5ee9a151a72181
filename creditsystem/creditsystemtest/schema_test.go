package creditsystemtest_test

import (
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/creditsystem/internal/xsdcheck"
)

var wsdlSchema = sync.OnceValues(func() (*xsdcheck.Set, error) {
	return xsdcheck.Load(filepath.Join("..", "wsdl", "cartera.wsdl"), filepath.Join("..", "wsdl", "central.wsdl"))
})

// checkedSchema is the schema of the WSDL files, for package xsdcheck.
func checkedSchema(t *testing.T) *xsdcheck.Set {
	t.Helper()
	s, err := wsdlSchema()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkedHTTPClient sends to srv and fails t on any request or answer that is not valid
// against the WSDL's schema. newFake uses it, so every test of the fake that goes through the
// client checks the fake's answers (success, business errors, faults) as a schema-validating
// SOAP stack would.
func checkedHTTPClient(t *testing.T, srv *creditsystemtest.Server) *http.Client {
	t.Helper()
	return &http.Client{Transport: &xsdcheck.Transport{Set: checkedSchema(t), Next: srv.Client().Transport, Report: func(err error) { t.Error(err) }}}
}
