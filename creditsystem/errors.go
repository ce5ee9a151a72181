package creditsystem

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/platform/integrations/internal/sdkerr"
	"github.com/platform/integrations/upstream"
)

var (
	_ upstream.Error = (*Error)(nil)
	_ upstream.Error = (*FaultError)(nil)
	_ upstream.Error = (*TransportError)(nil)
)

// CodeCardNotFound is the nNumeroError of a customer without a card.
const CodeCardNotFound = 2

// ErrCardNotFound matches, through errors.Is, a business error with nNumeroError 2
// (customer without card).
var ErrCardNotFound = errors.New("creditsystem: customer without card")

// ErrInvalidRequest is wrapped by the errors returned before any call for a request that
// cannot be sent: a field the specification makes required is missing. Reach it with
// errors.Is; the message names the operation and the missing fields.
var ErrInvalidRequest = errors.New("creditsystem: invalid request")

// missingFields returns an error wrapping ErrInvalidRequest when missing is not empty.
func missingFields(op string, missing []string) error {
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s: missing %s", ErrInvalidRequest, op, strings.Join(missing, ", "))
}

// Error is a business error: the creditsystem answered with lError = true (or with
// nNumeroError 2, which always means "customer without card"). Its kind is
// upstream.Rejected.
type Error struct {
	Op      string // operation, e.g. "GrabarAutorizacion"
	Code    int    // nNumeroError
	Message string // cTextoError
}

func (e *Error) Error() string {
	return fmt.Sprintf("creditsystem: %s: error %d: %s", e.Op, e.Code, e.Message)
}

// Is makes errors.Is(err, ErrCardNotFound) hold for code 2.
func (e *Error) Is(target error) bool {
	return target == ErrCardNotFound && e.Code == CodeCardNotFound
}

// Operation, Kind, ErrorCode, ErrorMessage and Timeout implement upstream.Error.
func (e *Error) Operation() string    { return e.Op }
func (e *Error) Kind() upstream.Kind  { return upstream.Rejected }
func (e *Error) ErrorCode() string    { return strconv.Itoa(e.Code) }
func (e *Error) ErrorMessage() string { return e.Message }
func (e *Error) Timeout() bool        { return false }

// FaultError is a SOAP fault, whether it came in an HTTP 500 (WCF's way) or an HTTP 200.
// Its kind is upstream.Fault.
type FaultError struct {
	Op         string
	Code       string // faultcode as written, e.g. "a:InternalServiceFault"
	String     string // faultstring
	Actor      string // faultactor
	Detail     string // inner XML of detail, at most 4 KiB; may hold server internals, not for end users
	HTTPStatus int
}

func (e *FaultError) Error() string {
	return fmt.Sprintf("creditsystem: %s: SOAP fault %s (HTTP %d): %s", e.Op, e.Code, e.HTTPStatus, e.String)
}

// Operation, Kind, ErrorCode, ErrorMessage and Timeout implement upstream.Error.
func (e *FaultError) Operation() string    { return e.Op }
func (e *FaultError) Kind() upstream.Kind  { return upstream.Fault }
func (e *FaultError) ErrorCode() string    { return e.Code }
func (e *FaultError) ErrorMessage() string { return e.String }
func (e *FaultError) Timeout() bool        { return false }

// TransportError is every failure that is neither an answer nor a fault: timeout, refused or
// dropped connection, an HTTP error status without a fault, an answer that does not decode.
// Its kind is upstream.NotSent when the request provably never left (the dial failed),
// upstream.OutcomeUnknown otherwise: whether the creditsystem applied a money-moving
// operation is then unknown.
type TransportError struct {
	Op         string
	HTTPStatus int // HTTP status when an answer arrived, else 0
	Err        error
}

func (e *TransportError) Error() string {
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("creditsystem: %s: HTTP %d: %v", e.Op, e.HTTPStatus, e.Err)
	}
	return fmt.Sprintf("creditsystem: %s: %v", e.Op, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, context.DeadlineExceeded) hold for every timeout, whatever
// produced it: the client's deadline, the context's, an *http.Client Timeout, a Transport's
// ResponseHeaderTimeout or a connection deadline (an "i/o timeout" net.Error, which on its
// own does not match context.DeadlineExceeded).
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
