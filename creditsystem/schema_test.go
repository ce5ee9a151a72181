package creditsystem_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/creditsystem/internal/xsdcheck"
)

// wsdlSchema is the schema of wsdl/cartera.wsdl and wsdl/central.wsdl, for
// package xsdcheck.
func wsdlSchema(t testing.TB) *xsdcheck.Set {
	t.Helper()
	s, err := xsdcheck.Load(filepath.Join("wsdl", "cartera.wsdl"), filepath.Join("wsdl", "central.wsdl"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The golden request of every operation is valid against the WSDL's schema, as a
// schema-validating WCF service checks it (dates as xs:dateTime, members in their namespace
// and order, nothing undeclared).
func TestGoldenRequestsMatchSchema(t *testing.T) {
	s := wsdlSchema(t)
	for _, tc := range operations {
		t.Run(tc.op, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "golden", tc.op+".request.xml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.ValidateEnvelope(body); err != nil {
				t.Error(err)
			}
		})
	}
}

// Every request the client sends and every answer the fake writes, for every operation of
// both services, in success, business error, card not found and fault (HTTP 500 and 200),
// is valid against the WSDL's schema. The requests of the preparing calls count too.
func TestWireMatchesSchema(t *testing.T) {
	s := wsdlSchema(t)
	scenarios := []struct {
		name   string
		script func(srv *creditsystemtest.Server, op string)
	}{
		{"success", func(*creditsystemtest.Server, string) {}},
		{"business error", func(srv *creditsystemtest.Server, op string) {
			srv.Script(op, creditsystemtest.BusinessError(51, "Cupo insuficiente"))
		}},
		{"card not found", func(srv *creditsystemtest.Server, op string) {
			srv.Script(op, creditsystemtest.BusinessError(creditsystem.CodeCardNotFound, "Cliente no tiene tarjeta"))
		}},
		{"fault", func(srv *creditsystemtest.Server, op string) {
			srv.Script(op, creditsystemtest.Fault("a:InternalServiceFault", "Error interno"))
		}},
		{"fault in HTTP 200", func(srv *creditsystemtest.Server, op string) {
			srv.Script(op, creditsystemtest.Fault("a:InternalServiceFault", "Error interno").WithStatus(http.StatusOK))
		}},
	}
	for _, sc := range scenarios {
		for _, tc := range operations {
			t.Run(sc.name+"/"+tc.op, func(t *testing.T) {
				srv := creditsystemtest.NewServer(
					creditsystemtest.WithClock(func() time.Time { return testNow }),
					creditsystemtest.WithCreditLine(dec("5000000.00")),
				)
				t.Cleanup(srv.Close)
				exchanges := 0
				check := &xsdcheck.Transport{Set: s, Next: srv.Client().Transport, Report: func(err error) { t.Error(err) }}
				c := newClient(t, srv.Config(), creditsystem.WithHTTPClient(&http.Client{Transport: countingTransport(check, &exchanges)}))
				p := tc.prepare(t, t.Context(), c)
				sc.script(srv, tc.op)
				if _, err := tc.call(t.Context(), c, p); (err == nil) != (sc.name == "success") {
					t.Fatalf("%s: err = %v", sc.name, err)
				}
				if exchanges == 0 {
					t.Fatal("nothing was checked")
				}
			})
		}
	}
}

func countingTransport(next http.RoundTripper, n *int) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		*n++
		return next.RoundTrip(r)
	})
}
