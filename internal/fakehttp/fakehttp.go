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
	"sync/atomic"
	"time"
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
	run(func() {
		defer func() { done <- recover() }()
		defer server.Body.Close()
		t.h.ServeHTTP(rec, server)
	})
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

// The handlers run on goroutines kept between exchanges (run): a fresh goroutine starts on a
// small stack, and a fake's XML decoding grew it by copying on every exchange (BENCHMARKS.md,
// "The credit service's own CPU per request").
var (
	idle       = make(chan func()) // unbuffered: a send succeeds only when a worker waits
	workerIdle atomic.Int64        // a test's shorter idleFor, in nanoseconds; 0: 10 s
)

// idleFor is how long a worker waits for the next exchange.
func idleFor() time.Duration {
	if d := workerIdle.Load(); d > 0 {
		return time.Duration(d)
	}
	return 10 * time.Second
}

// run calls fn on an idle worker, or on a new one when none waits.
func run(fn func()) {
	select {
	case idle <- fn:
	default:
		go work(fn)
	}
}

// work runs fn and then the exchanges handed to it, until none came for idleFor.
func work(fn func()) {
	t := time.NewTimer(idleFor())
	defer t.Stop()
	for {
		fn()
		fn = nil // the exchange's request and recorder are not kept while idle
		t.Reset(idleFor())
		select {
		case fn = <-idle:
		case <-t.C:
			return
		}
	}
}
