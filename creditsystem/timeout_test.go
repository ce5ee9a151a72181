package creditsystem_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
)

// stallingBody answers 200 with the start of an envelope and then nothing until the caller
// gives up: a timeout while the body is read.
func stallingBody(t *testing.T) string {
	t.Helper()
	done := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); ts.Close() })
	return ts.URL
}

// deadlineConn is a connection whose reads time out at a fixed deadline, as a dialer that sets
// net.Conn deadlines produces: "i/o timeout", which is not context.DeadlineExceeded by itself.
func deadlineDialer(d time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return conn, conn.SetDeadline(time.Now().Add(d))
	}
}

// Every way a call can run out of time is a *TransportError naming the operation for which
// errors.Is(err, context.DeadlineExceeded) and IsTimeout hold.
func TestEveryTimeoutIsDeadlineExceeded(t *testing.T) {
	const short = 150 * time.Millisecond
	cases := []struct {
		name    string
		hang    bool // script Hang on the fake; otherwise the stalling-body server is used
		timeout time.Duration
		ctx     func(context.Context) (context.Context, context.CancelFunc)
		hc      func() *http.Client
	}{
		{name: "Config.Timeout awaiting the answer", hang: true, timeout: short},
		{name: "Config.Timeout reading the body", timeout: short},
		{name: "context deadline awaiting the answer", hang: true, timeout: time.Minute,
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, short)
			}},
		{name: "context deadline reading the body", timeout: time.Minute,
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, short)
			}},
		{name: "http.Client Timeout awaiting the answer", hang: true, timeout: time.Minute,
			hc: func() *http.Client { return &http.Client{Timeout: short} }},
		{name: "http.Client Timeout reading the body", timeout: time.Minute,
			hc: func() *http.Client { return &http.Client{Timeout: short} }},
		{name: "Transport ResponseHeaderTimeout", hang: true, timeout: time.Minute,
			hc: func() *http.Client {
				tr := http.DefaultTransport.(*http.Transport).Clone()
				tr.ResponseHeaderTimeout = short
				return &http.Client{Transport: tr}
			}},
		{name: "connection deadline awaiting the answer", hang: true, timeout: time.Minute,
			hc: func() *http.Client {
				tr := http.DefaultTransport.(*http.Transport).Clone()
				tr.DialContext = deadlineDialer(short)
				return &http.Client{Transport: tr}
			}},
		{name: "connection deadline reading the body", timeout: time.Minute,
			hc: func() *http.Client {
				tr := http.DefaultTransport.(*http.Transport).Clone()
				tr.DialContext = deadlineDialer(short)
				return &http.Client{Transport: tr}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := creditsystemtest.NewServer()
			t.Cleanup(srv.Close)
			cfg := srv.Config()
			if tc.hang {
				srv.Script("ConsultarTarjeta", creditsystemtest.Hang())
			} else {
				cfg.CarteraURL = stallingBody(t)
			}
			cfg.Timeout = tc.timeout
			var opts []creditsystem.Option
			if tc.hc != nil {
				opts = append(opts, creditsystem.WithHTTPClient(tc.hc()))
			}
			c := newClient(t, cfg, opts...)
			ctx := t.Context()
			if tc.ctx != nil {
				var cancel context.CancelFunc
				ctx, cancel = tc.ctx(ctx)
				defer cancel()
			}
			start := time.Now()
			_, err := c.ConsultarTarjeta(ctx, creditsystem.ConsultarTarjetaRequest{Identificacion: ident1})
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Fatalf("the call took %v", elapsed)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("errors.Is(%v, context.DeadlineExceeded) = false", err)
			}
			var te *creditsystem.TransportError
			if !errors.As(err, &te) || te.Op != "ConsultarTarjeta" {
				t.Errorf("err = %v (%T), want a *TransportError of ConsultarTarjeta", err, err)
			}
			if !creditsystem.IsTimeout(err) || !creditsystem.IsTransport(err) {
				t.Errorf("IsTimeout = %t, IsTransport = %t", creditsystem.IsTimeout(err), creditsystem.IsTransport(err))
			}
			if errors.Is(err, context.Canceled) {
				t.Errorf("a timeout matched context.Canceled: %v", err)
			}
		})
	}
}
