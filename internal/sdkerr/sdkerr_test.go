package sdkerr_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/platform/integrations/internal/sdkerr"
	"github.com/platform/integrations/upstream"
)

type netTimeout struct{}

func (netTimeout) Error() string   { return "i/o timeout" }
func (netTimeout) Timeout() bool   { return true }
func (netTimeout) Temporary() bool { return true }

func post(err error) error { return &url.Error{Op: "Post", URL: "http://upstream", Err: err} }

func TestNeverSentAndTimedOut(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	cases := []struct {
		name          string
		err           error
		wantNeverSent bool
		wantTimedOut  bool
	}{
		{"connection refused", post(refused), true, false},
		{"unknown host", post(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}}), true, false},
		{"bare DNS error", &net.DNSError{Err: "no such host"}, true, false},
		{"dial timeout", post(&net.OpError{Op: "dial", Err: netTimeout{}}), true, true},
		{"marked", fmt.Errorf("token: %w", sdkerr.NotSent(errors.New("401"))), true, false},
		{"marked timeout", sdkerr.NotSent(post(context.DeadlineExceeded)), true, true},
		{"read reset", post(&net.OpError{Op: "read", Err: syscall.ECONNRESET}), false, false},
		{"read timeout", post(&net.OpError{Op: "read", Err: netTimeout{}}), false, true},
		{"dropped", post(io.EOF), false, false},
		{"deadline", post(context.DeadlineExceeded), false, true},
		{"cancelled", post(context.Canceled), false, false},
		{"nil", nil, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := sdkerr.NeverSent(tc.err); got != tc.wantNeverSent {
				t.Errorf("NeverSent = %t, want %t", got, tc.wantNeverSent)
			}
			if got := sdkerr.TimedOut(tc.err); got != tc.wantTimedOut {
				t.Errorf("TimedOut = %t, want %t", got, tc.wantTimedOut)
			}
		})
	}
}

func TestTransportKind(t *testing.T) {
	refused := post(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED})
	cases := []struct {
		name   string
		status int
		err    error
		want   upstream.Kind
	}{
		{"refused", 0, refused, upstream.NotSent},
		{"dropped", 0, post(io.EOF), upstream.OutcomeUnknown},
		{"an answer arrived", 502, refused, upstream.OutcomeUnknown},
		{"undecodable answer", 200, errors.New("undecodable"), upstream.OutcomeUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := sdkerr.TransportKind(tc.status, tc.err); got != tc.want {
				t.Errorf("TransportKind(%d, %v) = %v, want %v", tc.status, tc.err, got, tc.want)
			}
		})
	}
}

func TestNotSentKeepsTheError(t *testing.T) {
	cause := errors.New("oauth2: cannot fetch token")
	err := sdkerr.NotSent(cause)
	if err.Error() != cause.Error() || !errors.Is(err, cause) {
		t.Errorf("NotSent(%v) = %v", cause, err)
	}
}

func TestStatusCode(t *testing.T) {
	cases := []struct {
		status int
		want   string
	}{{0, ""}, {200, ""}, {204, ""}, {301, "301"}, {400, "400"}, {500, "500"}, {502, "502"}}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			if got := sdkerr.StatusCode(tc.status); got != tc.want {
				t.Errorf("StatusCode(%d) = %q, want %q", tc.status, got, tc.want)
			}
		})
	}
}

func TestRedactURLs(t *testing.T) {
	inner := &url.Error{Op: "Post", URL: "https://user:pw@spr.example/spr?token=S3CRET#frag", Err: errors.New("dial tcp: refused")}
	err := fmt.Errorf("carrier: %w: %w", context.DeadlineExceeded, sdkerr.RedactURLs(inner))
	if text := err.Error(); strings.Contains(text, "S3CRET") || strings.Contains(text, "pw") || strings.Contains(text, "frag") ||
		!strings.Contains(text, "https://spr.example/spr") {
		t.Fatalf("redacted error %q", text)
	}
	if got := sdkerr.RedactURL("::not a url"); got != "(unparsable URL)" {
		t.Fatalf("RedactURL of garbage = %q", got)
	}
	if sdkerr.RedactURLs(nil) != nil {
		t.Fatal("nil is not nil")
	}
}
