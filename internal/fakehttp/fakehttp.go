// Package fakehttp runs an http.Handler in the caller's process behind an http.RoundTripper:
// the no-socket transport of the SDKs' fakes (carriertest, creditsystemtest, erptest), which
// the services use in development mode.
//
// It behaves like the network where a client can tell: a request held by the handler ends
// when the request's context does (the context's error, as a real transport reports it), and
// a handler that aborts the exchange (panic(http.ErrAbortHandler), or a Hijack, which the
// recorder does not offer) is the error the fake names for a dropped connection, never an
// answer. Any other panic is an error, not a crash of the caller.
package fakehttp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
)

// Transport returns a RoundTripper that serves every request with h in the caller's process;
// dropped is returned for an exchange h aborts.
func Transport(h http.Handler, dropped error) http.RoundTripper {
	return transport{h: h, dropped: dropped}
}

type transport struct {
	h       http.Handler
	dropped error
}

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	server := req.Clone(ctx)
	server.RequestURI = req.URL.RequestURI()
	server.RemoteAddr = "127.0.0.1:0"
	if server.Body == nil {
		server.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		defer server.Body.Close()
		t.h.ServeHTTP(rec, server)
	}()
	select {
	case p := <-done:
		switch {
		case p == nil:
			resp := rec.Result()
			resp.Request = req
			return resp, nil
		case p == http.ErrAbortHandler:
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, t.dropped
		default:
			return nil, fmt.Errorf("fakehttp: handler panicked: %v", p)
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
