package xsdcheck

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// Transport is an http.RoundTripper for tests that validates, with ValidateEnvelope, every
// request body it sends and every answer body it receives, and passes both on unchanged.
// Report, which is required, receives the problems of each invalid envelope, naming the
// request's SOAPAction. An answer cut short is passed on without a check.
type Transport struct {
	Set    *Set
	Next   http.RoundTripper // nil: http.DefaultTransport
	Report func(error)
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	action := req.Header.Get("SOAPAction")
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		if err := t.Set.ValidateEnvelope(body); err != nil {
			t.Report(fmt.Errorf("request %s: %w\n%s", action, err, body))
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	res, err := next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		// The answer was cut short (a dropped connection): hand the client what arrived and
		// the error, as the connection would have.
		res.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		return res, nil
	}
	if err := t.Set.ValidateEnvelope(body); err != nil {
		t.Report(fmt.Errorf("answer (HTTP %d) to %s: %w\n%s", res.StatusCode, action, err, body))
	}
	return res, nil
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
