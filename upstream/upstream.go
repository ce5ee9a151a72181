package upstream

import (
	"errors"
	"strconv"
)

// Kind says what a failed upstream call means for the operation it carried.
type Kind int

const (
	// Rejected: the upstream answered and refused (lError, STATUS=ERROR, error_api, a
	// non-2xx ERP answer).
	Rejected Kind = iota + 1
	// Fault: the upstream answered a SOAP fault.
	Fault
	// OutcomeUnknown: the request may have reached the upstream: timeout, dropped
	// connection, bad HTTP status without fault, undecodable answer.
	OutcomeUnknown
	// NotSent: the request provably never left the process: the dial failed (connection
	// refused, DNS), the OAuth2 token could not be obtained.
	NotSent
)

// String returns "rejected", "fault", "outcome-unknown" or "not-sent".
func (k Kind) String() string {
	switch k {
	case Rejected:
		return "rejected"
	case Fault:
		return "fault"
	case OutcomeUnknown:
		return "outcome-unknown"
	case NotSent:
		return "not-sent"
	}
	return "upstream.Kind(" + strconv.Itoa(int(k)) + ")"
}

// Error is implemented by every error an SDK call returns for an upstream failure.
type Error interface {
	error
	// Operation is the upstream operation, e.g. GrabarAutorizacion, sre_topupd_76186,
	// SyncClient.
	Operation() string
	Kind() Kind
	// ErrorCode is the upstream's code as text (nNumeroError, ID_CODIGO, faultcode, HTTP
	// status), "" when none.
	ErrorCode() string
	// ErrorMessage is the upstream's own text (cTextoError, MENSAJE or SYSTEMMESSAGE,
	// faultstring, mensaje), "" when none.
	ErrorMessage() string
	// Timeout reports whether the call ran out of time (its own deadline, the context's,
	// or a network timeout).
	Timeout() bool
}

// As finds the first Error in err's tree, as errors.As does.
func As(err error) (Error, bool) {
	var e Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// KindOf returns the Kind of the Error in err, or 0 when err holds none.
func KindOf(err error) Kind {
	if e, ok := As(err); ok {
		return e.Kind()
	}
	return 0
}

// IsTimeout reports whether err holds an Error whose call ran out of time.
func IsTimeout(err error) bool {
	e, ok := As(err)
	return ok && e.Timeout()
}
