package carrier

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
)

// Outcomes of a call for the top-up service, named like the transaction
// statuses they lead to.
const (
	OutcomeSuccess     = "success"
	OutcomeFailed      = "failed"
	OutcomeUnavailable = "unavailable"
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
// ID_CODIGO. The top-up did not happen.
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

// FaultError is a SOAP Fault, in whatever HTTP status it came.
type FaultError struct {
	Op         string
	Code       string // faultcode as received
	String     string // faultstring
	HTTPStatus int
}

func (e *FaultError) Error() string {
	return fmt.Sprintf("carrier: %s: SOAP fault %s: %s", e.Op, e.Code, e.String)
}

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
// HTTP status or malformed answer. Whether the carrier acted is unknown.
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
	if target != context.DeadlineExceeded {
		return false
	}
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout()
}

// IsTimeout reports whether err is a call that ran out of time: the
// configured deadline, the context's, or a network timeout.
func IsTimeout(err error) bool {
	var te *TransportError
	return errors.As(err, &te) && errors.Is(te, context.DeadlineExceeded)
}

// IsTransport reports whether err is a *TransportError.
func IsTransport(err error) bool {
	var te *TransportError
	return errors.As(err, &te)
}

// Outcome classifies the result of a call for the top-up service, following
// the specification's error rules: nil is OutcomeSuccess; a business error
// (*Error) is OutcomeFailed, and so is ErrInvalidRequest, since nothing was
// sent; a SOAP fault, a transport error or any error this package did not
// make is OutcomeUnavailable, because the carrier may or may not have acted.
func Outcome(err error) string {
	var be *Error
	switch {
	case err == nil:
		return OutcomeSuccess
	case errors.As(err, &be), errors.Is(err, ErrInvalidRequest):
		return OutcomeFailed
	default:
		return OutcomeUnavailable
	}
}
