package creditsystem_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/platform/integrations/creditsystem/creditsystemtest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/golden/name byte for byte; -update rewrites the file.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update refreshes it after review)\ngot:  %s\nwant: %s", name, got, want)
	}
}

// The request envelope of every operation, byte for byte, so that any change to what goes on
// the wire shows in review.
func TestGoldenRequests(t *testing.T) {
	for _, tc := range operations {
		t.Run(tc.op, func(t *testing.T) {
			srv, c := newFake(t)
			p := tc.prepare(t, t.Context(), c)
			if _, err := tc.call(t.Context(), c, p); err != nil {
				t.Fatal(err)
			}
			r, ok := srv.LastRequest(tc.op)
			if !ok {
				t.Fatal("no request")
			}
			golden(t, tc.op+".request.xml", r.Body)
			headers := "Content-Type: " + r.Header.Get("Content-Type") + "\nSOAPAction: " + r.Header.Get("SOAPAction") + "\n"
			golden(t, tc.op+".request.headers", []byte(headers))
		})
	}
}

// SOAP 1.1 over WCF's basicHttpBinding: SOAPAction is a quoted string and the body is
// text/xml in UTF-8. Each expected action is written out, not computed.
func TestRequestHeaders(t *testing.T) {
	cases := []struct {
		op, ns, wantAction string
	}{
		{"ConsultarTarjeta", "http://tempuri.org/", `"http://tempuri.org/IServicioCar/ConsultarTarjeta"`},
		{"ConsultarAlternativaFinanciacion", "http://tempuri.org/", `"http://tempuri.org/IServicioCentral/ConsultarAlternativaFinanciacion"`},
		{"GrabarAutorizacion", "http://tempuri.org/", `"http://tempuri.org/IServicioCar/GrabarAutorizacion"`},
		{"GrabarConsumo", "http://tempuri.org/", `"http://tempuri.org/IServicioCar/GrabarConsumo"`},
		{"GrabarReversoAutorizacion", "http://tempuri.org/", `"http://tempuri.org/IServicioCar/GrabarReversoAutorizacion"`},
		{"GrabarReversoConsumo", "http://tempuri.org/", `"http://tempuri.org/IServicioCar/GrabarReversoConsumo"`},
		{"ConsultarDeudaTarjeta", "http://tempuri.org/", `"http://tempuri.org/IServicioCar/ConsultarDeudaTarjeta"`},
		{"GrabarPagoTarjeta", "http://tempuri.org/", `"http://tempuri.org/IServicioCar/GrabarPagoTarjeta"`},
		{"GrabarReversoPagoTarjeta", "http://tempuri.org/", `"http://tempuri.org/IServicioCar/GrabarReversoPagoTarjeta"`},
		{"ConsultarTarjeta", "http://creditsystem.example/cartera", `"http://creditsystem.example/cartera/IServicioCar/ConsultarTarjeta"`},
		{"ConsultarAlternativaFinanciacion", "urn:vendor:central/", `"urn:vendor:central/IServicioCentral/ConsultarAlternativaFinanciacion"`},
	}
	byOp := map[string]opCase{}
	for _, oc := range operations {
		byOp[oc.op] = oc
	}
	for _, tc := range cases {
		t.Run(tc.op+"/"+tc.ns, func(t *testing.T) {
			oc := byOp[tc.op]
			srv, c := newFake(t, creditsystemtest.WithNamespace(tc.ns))
			p := oc.prepare(t, t.Context(), c)
			if _, err := oc.call(t.Context(), c, p); err != nil {
				t.Fatal(err)
			}
			r, _ := srv.LastRequest(tc.op)
			if got := r.Header.Values("SOAPAction"); len(got) != 1 || got[0] != tc.wantAction {
				t.Errorf("SOAPAction = %q, want [%s]", got, tc.wantAction)
			}
			if got := r.Header.Values("Content-Type"); len(got) != 1 || got[0] != "text/xml; charset=utf-8" {
				t.Errorf("Content-Type = %q, want [text/xml; charset=utf-8]", got)
			}
		})
	}
}
