package metrics

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of an upstream call, the "outcome" label.
const (
	OutcomeOK        = "ok"         // an answer with HTTP status below 400
	OutcomeHTTPError = "http_error" // an answer with HTTP status 400 or above (SOAP faults come as 500)
	OutcomeTimeout   = "timeout"    // the deadline passed before the answer was complete
	OutcomeError     = "error"      // any other failure: refused, reset, unreachable, cancelled
)

// UnknownOperation labels a request whose operation the op function could not tell.
const UnknownOperation = "unknown"

type upstreamMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// Transport wraps base (nil: http.DefaultTransport) so every request records
// upstream_requests_total and upstream_request_duration_seconds with labels upstream, operation
// (from op, typically an SDK's OperationFromContext applied to the request's context) and
// outcome. The latency runs until the response body is read to the end or closed, so a slow
// body counts. Several transports may share one registerer: the collectors are registered once.
func Transport(base http.RoundTripper, upstream string, op func(*http.Request) string, reg prometheus.Registerer) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base, upstream: upstream, op: op, m: register(reg)}
}

// OperationFrom adapts an SDK's OperationFromContext to Transport's op argument.
func OperationFrom(fromContext func(context.Context) (string, bool)) func(*http.Request) string {
	return func(r *http.Request) string {
		if op, ok := fromContext(r.Context()); ok {
			return op
		}
		return ""
	}
}

func register(reg prometheus.Registerer) *upstreamMetrics {
	labels := []string{"upstream", "operation", "outcome"}
	m := &upstreamMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "upstream_requests_total",
			Help: "Calls to upstream systems, by upstream, operation and outcome (ok, http_error, timeout, error).",
		}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "upstream_request_duration_seconds",
			Help:    "Latency of calls to upstream systems until the answer is read, by upstream, operation and outcome.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60},
		}, labels),
	}
	if reg == nil {
		return m
	}
	m.requests = registerOrExisting(reg, m.requests)
	m.duration = registerOrExisting(reg, m.duration)
	return m
}

func registerOrExisting[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err)
	}
	return c
}

type transport struct {
	base     http.RoundTripper
	upstream string
	op       func(*http.Request) string
	m        *upstreamMetrics
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	op := UnknownOperation
	if t.op != nil {
		if o := t.op(req); o != "" {
			op = o
		}
	}
	start := time.Now()
	res, err := t.base.RoundTrip(req)
	if err != nil {
		t.record(op, classify(req.Context(), err), start)
		return nil, err
	}
	outcome := OutcomeOK
	if res.StatusCode >= 400 {
		outcome = OutcomeHTTPError
	}
	if res.Body == nil || res.Body == http.NoBody {
		t.record(op, outcome, start)
		return res, nil
	}
	res.Body = &observedBody{ReadCloser: res.Body, done: func(readErr error) {
		if readErr != nil {
			outcome = classify(req.Context(), readErr)
		}
		t.record(op, outcome, start)
	}}
	return res, nil
}

func (t *transport) record(op, outcome string, start time.Time) {
	t.m.requests.WithLabelValues(t.upstream, op, outcome).Inc()
	t.m.duration.WithLabelValues(t.upstream, op, outcome).Observe(time.Since(start).Seconds())
}

// classify tells a timeout from other failures. Besides the error itself it looks at the
// request's deadline: http.Client.Timeout cancels a custom transport's request through a channel
// as well as the context, and the error may then read "request canceled" although the deadline
// passed.
func classify(ctx context.Context, err error) string {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return OutcomeTimeout
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return OutcomeTimeout
	}
	return OutcomeError
}

// observedBody reports once: at EOF, at the first read error, or at Close, whichever comes first.
type observedBody struct {
	io.ReadCloser
	once sync.Once
	done func(readErr error)
}

func (b *observedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.once.Do(func() { b.done(nil) })
	case err != nil:
		b.once.Do(func() { b.done(err) })
	}
	return n, err
}

func (b *observedBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() { b.done(nil) })
	return err
}
