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

	"github.com/platform/integrations/upstream"
)

// Outcomes of an upstream call, the "outcome" label: what the call came to for the business,
// as the SDK that made it interpreted the answer (upstream.OnResult), or, for a request no SDK
// call made (an OAuth2 token request), as its HTTP status says.
const (
	// OutcomeOK: the upstream answered and did what was asked.
	OutcomeOK = "ok"
	// OutcomeRejected: the upstream answered and refused: creditsystem lError (or
	// nNumeroError 2), carrier STATUS=ERROR or a non-zero ID_CODIGO, ERP error_api or a 4xx;
	// without an SDK, a 4xx.
	OutcomeRejected = "rejected"
	// OutcomeFault: the upstream answered but failed: a SOAP fault, a 5xx, an answer the SDK
	// could not read.
	OutcomeFault = "fault"
	// OutcomeTimeout: no complete answer before the deadline.
	OutcomeTimeout = "timeout"
	// OutcomeUnreachable: no answer for another reason: connection refused or reset, DNS, TLS,
	// a dropped connection, a cancelled request.
	OutcomeUnreachable = "unreachable"
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
// outcome (what the SDK call made of the answer, see the package documentation). The latency
// runs until the response body is read to the end or closed, so a slow body counts. Several
// transports may share one registerer: the collectors are registered once.
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
			Help: "Calls to upstream systems, by upstream, operation and outcome (ok, rejected, fault, timeout, unreachable).",
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
		t.finish(req.Context(), op, classify(req.Context(), err), 0, start)
		return nil, err
	}
	if res.Body == nil || res.Body == http.NoBody {
		t.finish(req.Context(), op, "", res.StatusCode, start)
		return res, nil
	}
	status := res.StatusCode
	res.Body = &observedBody{ReadCloser: res.Body, done: func(readErr error) {
		failed := ""
		if readErr != nil {
			failed = classify(req.Context(), readErr)
		}
		t.finish(req.Context(), op, failed, status, start)
	}}
	return res, nil
}

// finish records one exchange that ended now: failed is the outcome of an exchange without a
// complete answer (timeout, unreachable), "" for an answer with HTTP status. The latency is the
// exchange's; the outcome waits for the SDK's interpretation of the answer when the request
// belongs to an SDK call (upstream.OnResult).
func (t *transport) finish(ctx context.Context, op, failed string, status int, start time.Time) {
	elapsed := time.Since(start)
	waits := upstream.OnResult(ctx, func(callErr error) {
		t.record(op, outcomeOf(failed, status, callErr), elapsed)
	})
	if !waits {
		t.record(op, httpOutcome(failed, status), elapsed)
	}
}

// outcomeOf is the outcome of an exchange that belongs to an SDK call which returned callErr.
// An exchange without a complete answer keeps what the transport saw; an answer is what the
// SDK made of it.
func outcomeOf(failed string, status int, callErr error) string {
	switch {
	case failed != "":
		return failed
	case callErr == nil:
		return OutcomeOK
	case upstream.IsTimeout(callErr):
		return OutcomeTimeout
	case upstream.KindOf(callErr) == upstream.Rejected && status < 500:
		return OutcomeRejected
	}
	// A SOAP fault, a 5xx (the ERP's SDK calls any non-2xx a refusal; a 5xx is the ERP
	// failing), an answer that could not be read.
	return OutcomeFault
}

// httpOutcome is the outcome of an exchange no SDK call interprets.
func httpOutcome(failed string, status int) string {
	switch {
	case failed != "":
		return failed
	case status >= 500:
		return OutcomeFault
	case status >= 400:
		return OutcomeRejected
	}
	return OutcomeOK
}

func (t *transport) record(op, outcome string, elapsed time.Duration) {
	t.m.requests.WithLabelValues(t.upstream, op, outcome).Inc()
	t.m.duration.WithLabelValues(t.upstream, op, outcome).Observe(elapsed.Seconds())
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
	return OutcomeUnreachable
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
