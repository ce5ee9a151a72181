package carriertest

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/internal/fakehttp"
)

// Server is a Fake listening on a loopback port, for tests that want the
// real network path (keep-alive, timeouts, dropped connections).
type Server struct {
	*Fake
	// URL is the SPR endpoint to put in carrier.Config.URL.
	URL string
	ts  *httptest.Server
}

// NewServer starts a Fake on loopback. Close it when done.
func NewServer(opts ...Option) *Server {
	f := NewFake(opts...)
	ts := httptest.NewServer(f)
	return &Server{Fake: f, URL: ts.URL + "/spr", ts: ts}
}

// TokenURL is the token endpoint of a server configured WithOAuth2.
func (s *Server) TokenURL() string { return s.ts.URL + TokenPath }

// Close releases held requests and shuts the server down.
func (s *Server) Close() {
	s.Fake.Close()
	s.ts.Close()
}

// ErrConnectionDropped is what the in-process Transport returns where a real
// connection would be closed without an answer (Drop, Hang, LateSuccess
// after the fake is closed).
var ErrConnectionDropped = errors.New("carriertest: connection dropped by the SPR")

// Transport returns an http.RoundTripper that hands every request to the
// fake in the caller's process: no socket, no network. It behaves like the
// network where it matters: a held request ends when the request's context
// does, and a dropped one is an error, never an answer.
func (f *Fake) Transport() http.RoundTripper {
	return fakehttp.Transport(f, ErrConnectionDropped)
}

// HTTPClient returns an *http.Client over Transport.
func (f *Fake) HTTPClient() *http.Client { return &http.Client{Transport: f.Transport()} }

// MockURL is the SPR address NewMock uses when the configuration has none.
// It is never dialled.
const MockURL = "http://carrier-spr.mock/spr"

// NewMock is mock mode (CARRIER_MOCK_MODE=true): a carrier client wired to a
// new in-process fake, with no network at all. The fake checks the
// credentials of cfg, and, when cfg.OAuth2 is set, issues tokens to its
// client id and secret at MockURL's TokenPath, valid for an hour. cfg.URL
// defaults to MockURL. opts are applied before the fake's HTTP client, so a
// WithHTTPClient among them is overridden: to chain your own RoundTripper
// (metrics), build the client yourself around Fake.Transport.
func NewMock(cfg carrier.Config, opts ...carrier.Option) (*carrier.Client, *Fake, error) {
	var fopts []Option
	if cfg.User != "" || cfg.Password != "" || cfg.CompanyID != "" {
		fopts = append(fopts, WithCredentials(cfg.User, cfg.Password, cfg.CompanyID))
	}
	if cfg.URL == "" {
		cfg.URL = MockURL
	}
	if cfg.OAuth2 != nil {
		o := *cfg.OAuth2
		o.TokenURL = "http://carrier-spr.mock" + TokenPath
		cfg.OAuth2 = &o
		fopts = append(fopts, WithOAuth2(o.ClientID, o.ClientSecret, time.Hour))
	}
	f := NewFake(fopts...)
	c, err := carrier.New(cfg, append(opts, carrier.WithHTTPClient(f.HTTPClient()))...)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return c, f, nil
}
