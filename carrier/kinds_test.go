package carrier_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/upstream"
)

// Every failed call is an upstream.Error whose kind says what became of the top-up.
func TestUpstreamKinds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() // nothing listens: the dial is refused
	ln.Close()

	cases := []struct {
		name        string
		react       *carriertest.Reaction // scripted on the fake
		subscriber  string
		url         string                // instead of the fake's
		oauth2      *carrier.OAuth2Config // the fake then issues tokens to cid/csecret
		want        upstream.Kind
		wantCode    string
		wantMessage string
		wantTimeout bool
	}{
		{name: "business error", react: ptr(carriertest.BusinessError("7", "rechazado")),
			want: upstream.Rejected, wantCode: "7", wantMessage: "rechazado"},
		{name: "magic no balance", subscriber: carriertest.SubscriberNoBalance,
			want: upstream.Rejected, wantCode: carriertest.CodeRejected, wantMessage: carriertest.MessageNoBalance},
		{name: "magic fault 350", subscriber: carriertest.SubscriberIPNotAuthorized,
			want: upstream.Fault, wantCode: "350", wantMessage: carriertest.FaultStringIPNotAuthorized},
		{name: "fault in an HTTP 200", react: ptr(carriertest.Fault("soap:Server", "boom").WithStatus(http.StatusOK)),
			want: upstream.Fault, wantCode: "soap:Server", wantMessage: "boom"},
		{name: "magic timeout", subscriber: carriertest.SubscriberTimeout,
			want: upstream.OutcomeUnknown, wantTimeout: true},
		{name: "magic late success", subscriber: carriertest.SubscriberLateSuccess,
			want: upstream.OutcomeUnknown, wantTimeout: true},
		{name: "slow past the deadline", react: ptr(carriertest.Process().After(time.Second)),
			want: upstream.OutcomeUnknown, wantTimeout: true},
		{name: "dropped connection", react: ptr(carriertest.Drop()),
			want: upstream.OutcomeUnknown},
		{name: "HTTP 503 without a fault", react: ptr(carriertest.Raw(http.StatusServiceUnavailable, "<html>down</html>")),
			want: upstream.OutcomeUnknown, wantCode: "503"},
		{name: "malformed HTTP 200", react: ptr(carriertest.Raw(http.StatusOK, "garbage")),
			want: upstream.OutcomeUnknown},
		{name: "connection refused", url: closed + "/spr",
			want: upstream.NotSent},
		{name: "OAuth2 token refused", oauth2: &carrier.OAuth2Config{ClientID: "cid", ClientSecret: "wrong"},
			want: upstream.NotSent},
		{name: "OAuth2 token endpoint refuses the connection", oauth2: &carrier.OAuth2Config{TokenURL: closed + "/token", ClientID: "cid", ClientSecret: "csecret"},
			want: upstream.NotSent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, carriertest.WithOAuth2("cid", "csecret", time.Hour))
			if tc.react != nil {
				srv.Script(carrier.FunctionTopup, *tc.react)
			}
			cfg := config(srv.URL, 300*time.Millisecond)
			if tc.url != "" {
				cfg.URL = tc.url
			}
			cfg.OAuth2 = &carrier.OAuth2Config{TokenURL: srv.TokenURL(), ClientID: "cid", ClientSecret: "csecret"}
			if tc.oauth2 != nil {
				cfg.OAuth2 = tc.oauth2
				if cfg.OAuth2.TokenURL == "" {
					cfg.OAuth2.TokenURL = srv.TokenURL()
				}
			}
			subscriber := "593987654321"
			if tc.subscriber != "" {
				subscriber = tc.subscriber
			}
			_, err := newClient(t, cfg).Topup(t.Context(), topup("KIND-1", subscriber))

			e, ok := upstream.As(err)
			if !ok {
				t.Fatalf("err = %v (%T), want an upstream.Error", err, err)
			}
			if e.Kind() != tc.want || e.Operation() != carrier.FunctionTopup || e.ErrorCode() != tc.wantCode || e.ErrorMessage() != tc.wantMessage {
				t.Errorf("kind %v, operation %q, code %q, message %q; want %v, %q, %q, %q",
					e.Kind(), e.Operation(), e.ErrorCode(), e.ErrorMessage(), tc.want, carrier.FunctionTopup, tc.wantCode, tc.wantMessage)
			}
			if e.Timeout() != tc.wantTimeout || carrier.IsTimeout(err) != tc.wantTimeout ||
				errors.Is(err, context.DeadlineExceeded) != tc.wantTimeout {
				t.Errorf("Timeout %t, IsTimeout %t, errors.Is(DeadlineExceeded) %t; want %t",
					e.Timeout(), carrier.IsTimeout(err), errors.Is(err, context.DeadlineExceeded), tc.wantTimeout)
			}
			if transport := tc.want == upstream.OutcomeUnknown || tc.want == upstream.NotSent; carrier.IsTransport(err) != transport {
				t.Errorf("IsTransport = %t, want %t", carrier.IsTransport(err), transport)
			}
			if calls := srv.Calls(carrier.FunctionTopup); calls > 1 || (tc.want == upstream.NotSent && calls != 0) {
				t.Errorf("Calls = %d", calls)
			}
		})
	}
}

// Errors refused before any call are sentinels, not upstream errors.
func TestInvalidRequestIsNotAnUpstreamError(t *testing.T) {
	srv := newServer(t)
	_, err := newClient(t, config(srv.URL, time.Second)).Topup(t.Context(), carrier.TopupRequest{})
	if !errors.Is(err, carrier.ErrInvalidRequest) || upstream.KindOf(err) != 0 {
		t.Errorf("err = %v, kind %v; want ErrInvalidRequest and no kind", err, upstream.KindOf(err))
	}
}
