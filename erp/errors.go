package erp

import (
	"context"
	"errors"
	"fmt"
	"net"
)

// Operation names: they prefix errors and label outgoing requests (OperationFromContext).
const (
	OpLookupClient = "LookupClient"
	OpSyncClient   = "SyncClient"
)

// ErrInvalidRequest is wrapped by the errors a method returns before calling the ERP, when
// its arguments cannot make a valid request: a required field missing or blank, an operacion
// other than 0 or 1, extra_fields that are not an object or reuse a field name. Nothing was
// sent. The services answer 400.
var ErrInvalidRequest = errors.New("invalid request")

// ErrInvalidInput is the former name of ErrInvalidRequest: the same error value, so
// errors.Is(err, ErrInvalidInput) and errors.Is(err, ErrInvalidRequest) agree.
//
// Deprecated: use ErrInvalidRequest.
var ErrInvalidInput = ErrInvalidRequest

// ErrUndecodable is wrapped (inside a *TransportError) when a 2xx answer is not the JSON
// shape documented in doc.go.
var ErrUndecodable = errors.New("undecodable ERP answer")

// APIError is the ERP refusing an operation: an HTTP 200 answer with error_api = true
// (StatusCode 200), or any answer outside 2xx. The services map it to 502.
type APIError struct {
	// Op is the operation (OpLookupClient, OpSyncClient).
	Op string
	// StatusCode is the HTTP status of the answer; a 2xx status (normally 200) means the
	// answer carried error_api = true.
	StatusCode int
	// Message is the ERP's "mensaje" (or "message"); without one, the HTTP status text.
	Message string
	// Body is the raw answer, as received except that a configured APIKey is redacted.
	Body []byte
}

func (e *APIError) Error() string {
	if e.IsErrorAPI() {
		return fmt.Sprintf("erp: %s: rejected by the ERP (error_api): %s", e.Op, e.Message)
	}
	return fmt.Sprintf("erp: %s: HTTP %d: %s", e.Op, e.StatusCode, e.Message)
}

// IsErrorAPI reports whether the ERP answered successfully at the HTTP level but with
// error_api = true (a business rejection), rather than with an HTTP error status.
func (e *APIError) IsErrorAPI() bool { return e.StatusCode >= 200 && e.StatusCode <= 299 }

// TransportError is a call that produced no usable ERP answer: timeout, refused or dropped
// connection, cancelled context, oversized or undecodable answer. It names the operation and
// wraps the cause, so errors.Is(err, context.DeadlineExceeded) holds for a timeout and
// errors.Is(err, ErrUndecodable) for an answer that could not be read.
type TransportError struct {
	Op  string
	Err error
}

func (e *TransportError) Error() string { return "erp: " + e.Op + ": " + e.Err.Error() }
func (e *TransportError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, context.DeadlineExceeded) hold for every timeout, also one a
// transport reports only as a net.Error whose Timeout is true (a dialer's own deadline),
// so that errors.Is and IsTimeout always agree.
func (e *TransportError) Is(target error) bool {
	if target != context.DeadlineExceeded {
		return false
	}
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout()
}

// IsTimeout reports whether err is an ERP call that ran out of time (its own deadline,
// the Config.Timeout, or the caller's). The operation may have been applied by the ERP.
func IsTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// IsTransport reports whether err is a *TransportError (timeouts included).
func IsTransport(err error) bool {
	var te *TransportError
	return errors.As(err, &te)
}
