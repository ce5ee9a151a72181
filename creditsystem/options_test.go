package creditsystem_test

import (
	"fmt"
	"net/http"
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
