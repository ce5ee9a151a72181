package erp

import (
	"context"
	"errors"
	"fmt"

	"github.com/platform/integrations/internal/sdkerr"
	"github.com/platform/integrations/upstream"
)

var (
	_ upstream.Error = (*Error)(nil)
	_ upstream.Error = (*TransportError)(nil)
)

// Operation names: they prefix errors and label outgoing requests (OperationFromContext).
const (
	OpLookupClient = "LookupClient"
	OpSyncClient   = "SyncClient"
)

// ErrInvalidRequest is wrapped by the errors a method returns before calling the ERP, when
// its arguments cannot make a valid request: a required field missing or blank, an operacion
// other than 0 or 1, extra_fields that are not an object or reuse a field name; for a
// hand-over an unknown evento, a numero_operacion or valor_pago not > 0, a fecha_pago that is
// not yyyy-mm-dd, an amount with more than 2 decimals. Nothing was sent. The services answer
// 400.
var ErrInvalidRequest = errors.New("invalid request")

// ErrUndecodable is wrapped (inside a *TransportError) when a 2xx answer is not the JSON
// shape documented in doc.go.
var ErrUndecodable = errors.New("undecodable ERP answer")

// Error is the ERP refusing an operation: an HTTP 200 answer with error_api = true, or any
// answer outside 2xx. Its kind is upstream.Rejected. The services map it to 502.
type Error struct {
	// Op is the operation (OpLookupClient, OpSyncClient, OpHandOverPayment).
	Op string
	// HTTPStatus is the HTTP status of the answer; a 2xx status (normally 200) means the
	// answer carried error_api = true.
	HTTPStatus int
	// Message is the ERP's "mensaje" (or "message"); without one, the HTTP status text.
	Message string
	// Body is the raw answer, as received except that a configured APIKey is redacted.
	Body []byte
}

func (e *Error) Error() string {
	if e.IsErrorAPI() {
		return fmt.Sprintf("erp: %s: rejected by the ERP (error_api): %s", e.Op, e.Message)
	}
	return fmt.Sprintf("erp: %s: HTTP %d: %s", e.Op, e.HTTPStatus, e.Message)
}

// IsErrorAPI reports whether the ERP answered successfully at the HTTP level but with
// error_api = true (a business rejection), rather than with an HTTP error status.
func (e *Error) IsErrorAPI() bool { return e.HTTPStatus >= 200 && e.HTTPStatus <= 299 }

// Operation, Kind, ErrorCode, ErrorMessage and Timeout implement upstream.Error.
func (e *Error) Operation() string   { return e.Op }
func (e *Error) Kind() upstream.Kind { return upstream.Rejected }

// ErrorCode is the HTTP status outside 2xx, "" for an error_api answer (the ERP sends no
// code).
func (e *Error) ErrorCode() string    { return sdkerr.StatusCode(e.HTTPStatus) }
func (e *Error) ErrorMessage() string { return e.Message }
func (e *Error) Timeout() bool        { return false }

// TransportError is a call that produced no usable ERP answer: timeout, refused or dropped
// connection, cancelled context, oversized or undecodable answer. It names the operation and
// wraps the cause, so errors.Is(err, context.DeadlineExceeded) holds for a timeout and
// errors.Is(err, ErrUndecodable) for an answer that could not be read. Its kind is
// upstream.NotSent when the request provably never left (the dial failed),
// upstream.OutcomeUnknown otherwise: the ERP may then have applied a create or update, or
// issued the document of a hand-over.
type TransportError struct {
	Op         string
	HTTPStatus int // HTTP status when an answer arrived, else 0
	Err        error
}

func (e *TransportError) Error() string {
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("erp: %s: HTTP %d: %v", e.Op, e.HTTPStatus, e.Err)
	}
	return fmt.Sprintf("erp: %s: %v", e.Op, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, context.DeadlineExceeded) hold for every timeout, also one a
// transport reports only as a net.Error whose Timeout is true (a dialer's own deadline),
// so that errors.Is and IsTimeout always agree.
func (e *TransportError) Is(target error) bool {
	return target == context.DeadlineExceeded && e.Timeout()
}

// Operation, Kind, ErrorCode, ErrorMessage and Timeout implement upstream.Error.
func (e *TransportError) Operation() string { return e.Op }

func (e *TransportError) Kind() upstream.Kind { return sdkerr.TransportKind(e.HTTPStatus, e.Err) }

// ErrorCode is the HTTP status of an answer outside 2xx, "" otherwise.
func (e *TransportError) ErrorCode() string    { return sdkerr.StatusCode(e.HTTPStatus) }
func (e *TransportError) ErrorMessage() string { return "" }

// Timeout reports whether the call ran out of time.
func (e *TransportError) Timeout() bool { return sdkerr.TimedOut(e.Err) }

// IsTimeout reports whether err holds an upstream.Error of a call that ran out of time (the
// client's deadline, the context's, or a network timeout): upstream.IsTimeout(err).
func IsTimeout(err error) bool { return upstream.IsTimeout(err) }

// IsTransport reports whether err holds a *TransportError: no usable answer arrived (kind
// upstream.OutcomeUnknown or upstream.NotSent).
func IsTransport(err error) bool {
	var te *TransportError
	return errors.As(err, &te)
}
