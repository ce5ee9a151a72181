package carrier_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/upstream"
)

// dialTimeout is a network timeout as a transport reports it (a dialer's or a
// proxy's own deadline): a net.Error whose Timeout is true, not
// context.DeadlineExceeded.
type dialTimeout struct{}

func (dialTimeout) Error() string   { return "i/o timeout" }
func (dialTimeout) Timeout() bool   { return true }
func (dialTimeout) Temporary() bool { return true }

// stallingBody gives the start of an answer, then blocks until ctx ends and
// fails in its own words.
type stallingBody struct {
	ctx  context.Context
	sent bool
}

func (b *stallingBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, `<umsprot version="1"><exec_rsp result="0"`), nil
	}
	<-b.ctx.Done()
	return 0, errors.New("stream reset by proxy")
}

func (b *stallingBody) Close() error { return nil }

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestEveryTimeoutIsDeadlineExceeded: however the time runs out
// (Config.Timeout, the caller's deadline, the injected http.Client's Timeout,
// a transport's own timeout, the OAuth2 token fetch, before or after the
// headers), errors.Is(err, context.DeadlineExceeded) and IsTimeout hold, the
// outcome is unavailable, and the error is still a *TransportError naming the
// function.
func TestEveryTimeoutIsDeadlineExceeded(t *testing.T) {
	const short = 200 * time.Millisecond
	// stallBody sends the headers and the start of the answer, then stalls. It reads the
	// request first, so that the server notices when the client hangs up.
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	stallBody := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`<umsprot version="1"><exec_rsp result="0"`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	hangToken := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	withTimeout := func(base http.RoundTripper) *http.Client { return &http.Client{Transport: base, Timeout: short} }
	tests := []struct {
		name       string
		timeout    time.Duration                             // Config.Timeout
		ctx        time.Duration                             // the caller's deadline, when > 0
		subscriber string                                    // against the fake SPR
		handler    http.HandlerFunc                          // a hand-written SPR, when set
		token      http.HandlerFunc                          // an OAuth2 token endpoint, when set
		hc         func(base http.RoundTripper) *http.Client // WithHTTPClient, when set
		notSent    bool                                      // the request provably never left: NotSent, not OutcomeUnknown
	}{
		{name: "Config.Timeout before the headers", timeout: short, subscriber: carriertest.SubscriberTimeout},
		{name: "Config.Timeout while reading the body", timeout: short, handler: stallBody},
		{name: "caller's deadline sooner than Config.Timeout", timeout: time.Minute, ctx: short, subscriber: carriertest.SubscriberTimeout},
		{name: "http.Client Timeout before the headers", timeout: time.Minute, subscriber: carriertest.SubscriberTimeout, hc: withTimeout},
		{name: "http.Client Timeout while reading the body", timeout: time.Minute, handler: stallBody, hc: withTimeout},
		{name: "OAuth2 token endpoint never answers", timeout: short, subscriber: "593987654321", token: hangToken, notSent: true},
		{name: "transport reports a network timeout", timeout: time.Minute, subscriber: "593987654321", notSent: true,
			hc: func(http.RoundTripper) *http.Client {
				return &http.Client{Transport: rtFunc(func(*http.Request) (*http.Response, error) {
					return nil, &net.OpError{Op: "dial", Net: "tcp", Err: dialTimeout{}}
				})}
			}},
		{name: "transport reports the deadline in its own words", timeout: short, subscriber: "593987654321",
			hc: func(http.RoundTripper) *http.Client {
				return &http.Client{Transport: rtFunc(func(r *http.Request) (*http.Response, error) {
					<-r.Context().Done()
					return nil, errors.New("stream reset by proxy")
				})}
			}},
		{name: "transport's body fails in its own words at the deadline", timeout: short, subscriber: "593987654321",
			hc: func(http.RoundTripper) *http.Client {
				return &http.Client{Transport: rtFunc(func(r *http.Request) (*http.Response, error) {
					return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/xml"}},
						Body: &stallingBody{ctx: r.Context()}, Request: r}, nil
				})}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var url string
			if tt.handler != nil {
				hs := httptest.NewServer(tt.handler)
				t.Cleanup(hs.Close)
				url = hs.URL
			} else {
				url = newServer(t).URL
			}
			cfg := config(url, tt.timeout)
			if tt.token != nil {
				ts := httptest.NewServer(tt.token)
				t.Cleanup(ts.Close)
				cfg.OAuth2 = &carrier.OAuth2Config{TokenURL: ts.URL, ClientID: "cid", ClientSecret: "csecret"}
			}
			var opts []carrier.Option
			if tt.hc != nil {
				tr := http.DefaultTransport.(*http.Transport).Clone()
				t.Cleanup(tr.CloseIdleConnections)
				opts = append(opts, carrier.WithHTTPClient(tt.hc(tr)))
			}
			c := newClient(t, cfg, opts...)
			ctx := t.Context()
			if tt.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctx)
				defer cancel()
			}
			subscriber := tt.subscriber
			if subscriber == "" {
				subscriber = "593987654321"
			}
			_, err := c.Topup(ctx, topup("T-TIMEOUT-1", subscriber))
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("errors.Is(%v, context.DeadlineExceeded) = false", err)
			}
			want := upstream.OutcomeUnknown
			if tt.notSent {
				want = upstream.NotSent
			}
			if !carrier.IsTimeout(err) || upstream.KindOf(err) != want {
				t.Errorf("IsTimeout(%v) = %v, kind %v; want a timeout, %v", err, carrier.IsTimeout(err), upstream.KindOf(err), want)
			}
			var te *carrier.TransportError
			if !errors.As(err, &te) || te.Op != carrier.FunctionTopup {
				t.Errorf("errors.As(*TransportError) = %+v, want Op %s", te, carrier.FunctionTopup)
			}
		})
	}
}
