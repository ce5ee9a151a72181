package carrier

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/platform/integrations/internal/sdkerr"
	"github.com/platform/integrations/upstream"
)

var (
	_ upstream.Error = (*Error)(nil)
	_ upstream.Error = (*FaultError)(nil)
	_ upstream.Error = (*TransportError)(nil)
)

var (
	// ErrIPNotAuthorized matches, with errors.Is, a *FaultError with faultcode
	// 350: the carrier does not accept calls from our outgoing IP address.
	ErrIPNotAuthorized = errors.New("carrier: outgoing IP address not authorized (faultcode 350)")

	// ErrInvalidRequest is returned, before anything is sent, for a request
	// that misses a required field.
	ErrInvalidRequest = errors.New("carrier: invalid request")

	// ErrBadStatus is wrapped by a *TransportError when the SPR answered an
	// HTTP status other than 2xx without a SOAP Fault or a business error
	// (STATUS=ERROR, non-zero ID_CODIGO) in the body.
	ErrBadStatus = errors.New("carrier: unexpected HTTP status")

	// ErrMalformedAnswer is wrapped by a *TransportError when the answer
	// cannot be read as an exec_rsp or a Fault, is too large, or lacks the
	// STATUS and ID_CODIGO that decide success.
	ErrMalformedAnswer = errors.New("carrier: malformed answer")
)

// Error is a business error: the SPR answered STATUS=ERROR or a non-zero
// ID_CODIGO. The top-up did not happen. Its kind is upstream.Rejected.
type Error struct {
	Op            string // carrier function, e.g. sre_topupd_76186
	Status        string // STATUS as received
	Code          string // ID_CODIGO as received
	Message       string // MENSAJE
	SystemMessage string // SYSTEMMESSAGE
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "carrier: %s: STATUS=%s ID_CODIGO=%s", e.Op, e.Status, e.Code)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.SystemMessage != "" && e.SystemMessage != e.Message {
		b.WriteString(" (")
		b.WriteString(e.SystemMessage)
		b.WriteString(")")
	}
	return b.String()
}

// Operation, Kind, ErrorCode, ErrorMessage and Timeout implement upstream.Error.
func (e *Error) Operation() string   { return e.Op }
func (e *Error) Kind() upstream.Kind { return upstream.Rejected }
func (e *Error) ErrorCode() string   { return e.Code }

// ErrorMessage is MENSAJE, or SYSTEMMESSAGE when MENSAJE is empty.
func (e *Error) ErrorMessage() string {
	if e.Message != "" {
		return e.Message
	}
	return e.SystemMessage
}

func (e *Error) Timeout() bool { return false }

// FaultError is a SOAP Fault, in whatever HTTP status it came. Its kind is
// upstream.Fault.
type FaultError struct {
	Op         string
	Code       string // faultcode as received
	String     string // faultstring
	HTTPStatus int
}

func (e *FaultError) Error() string {
	return fmt.Sprintf("carrier: %s: SOAP fault %s: %s", e.Op, e.Code, e.String)
}

// Operation, Kind, ErrorCode, ErrorMessage and Timeout implement upstream.Error.
func (e *FaultError) Operation() string    { return e.Op }
func (e *FaultError) Kind() upstream.Kind  { return upstream.Fault }
func (e *FaultError) ErrorCode() string    { return e.Code }
func (e *FaultError) ErrorMessage() string { return e.String }
func (e *FaultError) Timeout() bool        { return false }

// Is makes errors.Is(err, ErrIPNotAuthorized) hold for faultcode 350. A
// faultcode is a QName, so "350", "soap:350" and "Server.350" all match.
func (e *FaultError) Is(target error) bool {
	return target == ErrIPNotAuthorized && faultNumber(e.Code) == "350"
}

func faultNumber(code string) string {
	code = strings.TrimSpace(code)
	if i := strings.LastIndexAny(code, ":."); i >= 0 {
		code = code[i+1:]
	}
	return code
}

// TransportError is a call that did not get a usable answer: timeout,
// connection refused or dropped, unreachable SPR, OAuth2 token failure, bad
// HTTP status or malformed answer. Its kind is upstream.NotSent when the
// request provably never left (the dial failed, the OAuth2 token could not be
// obtained), upstream.OutcomeUnknown otherwise: whether the carrier acted is
// then unknown.
type TransportError struct {
	Op         string
	HTTPStatus int // 0 when no HTTP answer arrived
	Err        error
}

func (e *TransportError) Error() string {
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("carrier: %s: HTTP %d: %v", e.Op, e.HTTPStatus, e.Err)
	}
	return fmt.Sprintf("carrier: %s: %v", e.Op, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// Is lets errors.Is(err, context.DeadlineExceeded) hold for every timeout,
// including those the network stack reports without that sentinel.
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
