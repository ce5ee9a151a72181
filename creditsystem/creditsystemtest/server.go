package creditsystemtest

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/internal/fakehttp"
)

// ErrConnectionDropped is what Transport returns where a real connection would close without
// an answer (Drop, LateSuccess, a held request when the fake is closed).
var ErrConnectionDropped = errors.New("creditsystemtest: connection dropped by the creditsystem")

// MockURL is the base address for a client over Transport; it is never dialled. The fake
// routes MockURL+CarteraPath and MockURL+CentralPath as a Server routes its URLs.
const MockURL = "http://creditsystem.mock"

// Transport returns an http.RoundTripper that hands every request to the fake in the caller's
// process: no socket, no network. A held request ends when the request's context does.
func (f *Fake) Transport() http.RoundTripper {
	return fakehttp.Transport(f, ErrConnectionDropped)
}

// HTTPClient returns an *http.Client over Transport.
func (f *Fake) HTTPClient() *http.Client { return &http.Client{Transport: f.Transport()} }

// Server is a Fake listening on a loopback port through httptest (HTTP/1.1), for tests that
// want the real network path (keep-alive, timeouts, dropped connections).
//
// URL serves both services: the fake routes by SOAPAction, so a client may use URL as both
// Cartera and Central address. CarteraURL and CentralURL are URL plus the WSDL paths and,
// like the real services, each accepts only its own operations.
type Server struct {
	*Fake
	URL        string
	CarteraURL string
	CentralURL string

	ts    *httptest.Server
	conns atomic.Int64
}

// NewServer starts a Fake on loopback. Close it when done (t.Cleanup(srv.Close)).
func NewServer(opts ...Option) *Server {
	s := &Server{Fake: NewFake(opts...)}
	s.ts = httptest.NewUnstartedServer(s.Fake)
	s.ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.ts.Start()
	s.URL = s.ts.URL
	s.CarteraURL = s.ts.URL + CarteraPath
	s.CentralURL = s.ts.URL + CentralPath
	return s
}

// Close releases held requests and shuts the server down.
func (s *Server) Close() {
	s.Fake.Close()
	s.ts.Close()
}

// Client returns an *http.Client for the server (the httptest one).
func (s *Server) Client() *http.Client { return s.ts.Client() }

// Connections returns how many TCP connections the server has accepted.
func (s *Server) Connections() int { return int(s.conns.Load()) }

// Config returns a client configuration for this server: its two URLs, its namespace and the
// constants of DevConfig. Timeout is left to the caller (zero means the client's default).
func (s *Server) Config() creditsystem.Config {
	c := DevConfig()
	c.CarteraURL, c.CentralURL, c.SOAPNamespace = s.CarteraURL, s.CentralURL, s.Namespace()
	return c
}

// Constants of DevConfig.
const (
	DevUsuario   = "SOAPUSER"
	DevTerminal  = "TERMINAL01"
	DevOTPBypass = "123456"
)

// DevConfig returns the constants a development setup can use against the fake (URLs left
// empty): Usuario DevUsuario, CodigoEmpresa 000598, Terminal DevTerminal, OTPBypass
// DevOTPBypass.
func DevConfig() creditsystem.Config {
	return creditsystem.Config{
		Usuario:       DevUsuario,
		CodigoEmpresa: creditsystem.DefaultCodigoEmpresa,
		Terminal:      DevTerminal,
		OTPBypass:     DevOTPBypass,
	}
}
