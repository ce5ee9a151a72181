package creditsystem_test

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
)

// A nil Option is ignored: New neither panics nor fails, and the other options still apply.
func TestNewNilOption(t *testing.T) {
	srv := creditsystemtest.NewServer(nil) // the fake ignores a nil Option too
	t.Cleanup(srv.Close)
	var sent atomic.Int64
	hc := &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		sent.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	cases := []struct {
		name      string
		opts      []creditsystem.Option
		wantCount bool // the request goes through hc
	}{
		{"only nil", []creditsystem.Option{nil}, false},
		{"nil before WithHTTPClient", []creditsystem.Option{nil, creditsystem.WithHTTPClient(hc)}, true},
		{"nil after WithHTTPClient", []creditsystem.Option{creditsystem.WithHTTPClient(hc), nil}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sent.Store(0)
			c, err := func() (c *creditsystem.Client, err error) {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("New panicked: %v", p)
					}
				}()
				return creditsystem.New(srv.Config(), tc.opts...)
			}()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1}); err != nil {
				t.Fatal(err)
			}
			if got := sent.Load() == 1; got != tc.wantCount {
				t.Errorf("request through the injected client = %t, want %t", got, tc.wantCount)
			}
		})
	}
}

// Central's WCF contract name is IServicioCentral unless WithCentralContract says otherwise;
// Cartera's (IServicioCar, fixed by the specification) never changes.
func TestCentralContract(t *testing.T) {
	cases := []struct {
		name           string
		clientContract string // "" leaves the default
		fakeContract   string // "" leaves the default
		wantAction     string
		wantFault      bool
	}{
		{"default", "", "", "http://tempuri.org/IServicioCentral/ConsultarAlternativaFinanciacion", false},
		{"configured on both sides", "IServicioCentralV2", "IServicioCentralV2", "http://tempuri.org/IServicioCentralV2/ConsultarAlternativaFinanciacion", false},
		{"configured on the client only", "IServicioCentralV2", "", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var fakeOpts []creditsystemtest.Option
			if tc.fakeContract != "" {
				fakeOpts = append(fakeOpts, creditsystemtest.WithCentralContract(tc.fakeContract))
			}
			srv := creditsystemtest.NewServer(fakeOpts...)
			t.Cleanup(srv.Close)
			var opts []creditsystem.Option
			if tc.clientContract != "" {
				opts = append(opts, creditsystem.WithCentralContract(tc.clientContract))
			}
			c := newClient(t, srv.Config(), opts...)
			_, err := operations[1].call(t.Context(), c, prepared{})
			if tc.wantFault {
				var fe *creditsystem.FaultError
				if !errors.As(err, &fe) || fe.Code != "a:ActionNotSupported" {
					t.Fatalf("err = %v, want ActionNotSupported", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r, _ := srv.LastRequest("ConsultarAlternativaFinanciacion")
			if r.SOAPAction != tc.wantAction {
				t.Errorf("SOAPAction = %q, want %q", r.SOAPAction, tc.wantAction)
			}
			if _, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1}); err != nil {
				t.Fatal(err)
			}
			if r, _ := srv.LastRequest("ConsultarTarjeta"); r.SOAPAction != "http://tempuri.org/IServicioCar/ConsultarTarjeta" {
				t.Errorf("Cartera SOAPAction = %q", r.SOAPAction)
			}
		})
	}
	for _, bad := range []string{"", "IServicio/Central", `IServicio"Central`, "IServicio Central"} {
		t.Run("invalid "+strconv.Quote(bad), func(t *testing.T) {
			cfg := creditsystemtest.DevConfig()
			cfg.CarteraURL, cfg.CentralURL = "http://cartera.local/svc", "http://central.local/svc"
			if _, err := creditsystem.New(cfg, creditsystem.WithCentralContract(bad)); err == nil || !strings.Contains(err.Error(), "WithCentralContract") {
				t.Errorf("err = %v, want WithCentralContract refused", err)
			}
		})
	}
	if creditsystem.DefaultCentralContract != "IServicioCentral" {
		t.Errorf("DefaultCentralContract = %q", creditsystem.DefaultCentralContract)
	}
}
