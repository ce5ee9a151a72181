package carrier

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

	"github.com/platform/integrations/upstream"
)

type netTimeout struct{}

func (netTimeout) Error() string   { return "i/o timeout" }
func (netTimeout) Timeout() bool   { return true }
func (netTimeout) Temporary() bool { return true }

var _ net.Error = netTimeout{}

// TestErrorKinds maps every error the client returns to its upstream kind
// (rule 2 of the specification's errors): a business error is Rejected, a
// SOAP fault Fault, a transport error OutcomeUnknown unless the request
// provably never left (NotSent). ErrInvalidRequest, refused before anything
// is sent, and an error this package did not make have no kind.
func TestErrorKinds(t *testing.T) {
	post := func(err error) error { return &url.Error{Op: "Post", URL: "http://spr", Err: err} }
	tests := []struct {
		name      string
		err       error
		kind      upstream.Kind // 0: no upstream.Error
		invalid   bool          // errors.Is(err, ErrInvalidRequest)
		timeout   bool
		transport bool
	}{
		{name: "nil is success", err: nil},
		{name: "business error", err: &Error{Op: FunctionTopup, Status: StatusError, Code: "1"}, kind: upstream.Rejected},
		{name: "wrapped business error", err: fmt.Errorf("topup: %w", &Error{Op: FunctionTopup, Code: "3"}), kind: upstream.Rejected},
		{name: "invalid request, nothing sent", err: fmt.Errorf("%w: x", ErrInvalidRequest), invalid: true},
		{name: "SOAP fault", err: &FaultError{Op: FunctionTopup, Code: "soap:Server"}, kind: upstream.Fault},
		{name: "fault 350", err: &FaultError{Op: FunctionTopup, Code: "350"}, kind: upstream.Fault},
		{name: "deadline", err: &TransportError{Op: FunctionTopup, Err: post(context.DeadlineExceeded)}, kind: upstream.OutcomeUnknown, timeout: true, transport: true},
		{name: "network timeout", err: &TransportError{Op: FunctionTopup, Err: post(netTimeout{})}, kind: upstream.OutcomeUnknown, timeout: true, transport: true},
		{name: "connection refused", err: &TransportError{Op: FunctionTopup, Err: post(&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})}, kind: upstream.NotSent, transport: true},
		{name: "connection dropped", err: &TransportError{Op: FunctionTopup, Err: post(io.EOF)}, kind: upstream.OutcomeUnknown, transport: true},
		{name: "caller cancelled", err: &TransportError{Op: FunctionTopup, Err: post(context.Canceled)}, kind: upstream.OutcomeUnknown, transport: true},
		{name: "bad status", err: &TransportError{Op: FunctionTopup, HTTPStatus: 503, Err: ErrBadStatus}, kind: upstream.OutcomeUnknown, transport: true},
		{name: "malformed answer", err: &TransportError{Op: FunctionTopup, HTTPStatus: 200, Err: ErrMalformedAnswer}, kind: upstream.OutcomeUnknown, transport: true},
		{name: "foreign error", err: errors.New("something else")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errors.Is(tt.err, ErrInvalidRequest); got != tt.invalid {
				t.Errorf("errors.Is(err, ErrInvalidRequest) = %v, want %v", got, tt.invalid)
			}
			if got := upstream.KindOf(tt.err); got != tt.kind {
				t.Errorf("kind = %v, want %v", got, tt.kind)
			}
			if got := IsTimeout(tt.err); got != tt.timeout {
				t.Errorf("IsTimeout = %v, want %v", got, tt.timeout)
			}
			if got := IsTransport(tt.err); got != tt.transport {
				t.Errorf("IsTransport = %v, want %v", got, tt.transport)
			}
			if tt.timeout && !errors.Is(tt.err, context.DeadlineExceeded) {
				t.Errorf("errors.Is(err, context.DeadlineExceeded) = false for a timeout")
			}
		})
	}
}

func TestFaultErrorIs(t *testing.T) {
	for code, want := range map[string]bool{
		"350": true, " 350 ": true, "soap:350": true, "Server.350": true, "SOAP-ENV:Server.350": true,
		"3500": false, "35": false, "soap:Server": false, "": false, "351": false,
	} {
		err := fmt.Errorf("wrapped: %w", &FaultError{Op: FunctionTopup, Code: code})
		if got := errors.Is(err, ErrIPNotAuthorized); got != want {
			t.Errorf("faultcode %q: errors.Is(ErrIPNotAuthorized) = %v, want %v", code, got, want)
		}
	}
}

func TestErrorMessagesNameTheFunction(t *testing.T) {
	for _, err := range []error{
		&Error{Op: FunctionQueryRecharge, Status: "ERROR", Code: "1", Message: "transaction not found"},
		&FaultError{Op: FunctionQueryRecharge, Code: "350", String: "IP"},
		&TransportError{Op: FunctionQueryRecharge, Err: io.EOF},
		&TransportError{Op: FunctionQueryRecharge, HTTPStatus: 502, Err: ErrBadStatus},
	} {
		if msg := err.Error(); !containsAll(msg, "carrier: ", FunctionQueryRecharge) {
			t.Errorf("%q does not name the package and function", msg)
		}
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
