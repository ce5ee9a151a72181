package creditsystem

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
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
// nNumeroError 2, which always means "customer without card").
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

// FaultError is a SOAP fault, whether it came in an HTTP 500 (WCF's way) or an HTTP 200.
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

// TransportError is every failure that is neither an answer nor a fault: timeout, refused or
// dropped connection, an HTTP error status without a fault, an answer that does not decode.
// Whether the upstream applied a money-moving operation is unknown after one.
type TransportError struct {
	Op         string
	StatusCode int // HTTP status when an answer arrived, else 0
	Err        error
}

func (e *TransportError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("creditsystem: %s: HTTP %d: %v", e.Op, e.StatusCode, e.Err)
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

// Timeout reports whether the call ran out of time.
func (e *TransportError) Timeout() bool {
	if errors.Is(e.Err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout()
}

// IsTimeout reports whether err is a call that ran out of time (the configured timeout, the
// context's deadline, or a timeout of the *http.Client, its Transport or the connection).
func IsTimeout(err error) bool {
	var te *TransportError
	if errors.As(err, &te) {
		return te.Timeout()
	}
	return errors.Is(err, context.DeadlineExceeded)
}

// IsTransport reports whether err is a *TransportError.
func IsTransport(err error) bool {
	var te *TransportError
	return errors.As(err, &te)
}
