package topup

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Guard and request errors, reached with errors.Is. The service maps each to one HTTP status.
var (
	// ErrThrottled: the user made the throttle's limit of requests in its window (5 per 60 s,
	// group "recharge"). The concrete error is a *ThrottleError carrying the wait.
	ErrThrottled = errors.New("topup: too many top-up requests; try again later")
	// ErrDailyLimit: the user reached RECARGAS_DAILY_LIMIT manual top-ups today
	// (America/Guayaquil) and has no unlimited_recargas permission.
	ErrDailyLimit = errors.New("topup: daily top-up limit reached")
	// ErrActionTokenUsed: the action token's jti was already used once.
	ErrActionTokenUsed = errors.New("topup: action token already used")
	// ErrActionTokenInvalid: the action token is not for this user, has no jti or expiry, or
	// its jti (200 bytes) or subject (100 bytes) is longer than the store keeps or holds a
	// control character.
	ErrActionTokenInvalid = errors.New("topup: action token invalid")
	// ErrDuplicateInvoice: a webhook with a source_xml_hash already processed.
	// The concrete error is a *DuplicateError.
	ErrDuplicateInvoice = errors.New("topup: invoice already processed")
	// ErrInvalidRequest: a request breaks a field rule. The concrete error is a *ValidationError.
	ErrInvalidRequest = errors.New("topup: invalid request")
	// ErrRejected: the webhook's invoice was recorded rejected (no mapping, amount mismatch).
	// The concrete error is a *RejectedError.
	ErrRejected = errors.New("topup: invoice rejected")
)

// Rejection reasons recorded in rejection_reason: ReasonProductNotMapped and
// ReasonAmountMismatch alone (the details are in RejectedError.Detail and the notification),
// ReasonInvalidPayload and ReasonDuplicate followed by ": " and what was wrong.
const (
	ReasonProductNotMapped = "PRODUCT_NOT_MAPPED"
	ReasonAmountMismatch   = "AMOUNT_MISMATCH"
	ReasonInvalidPayload   = "INVALID_PAYLOAD"
	ReasonDuplicate        = "DUPLICATE_SOURCE_XML_HASH"
)

// BodyField names, in a FieldError, a problem of the whole request body (not JSON, not an
// object, empty) rather than of one member.
const BodyField = "request body"

// ThrottleError is ErrThrottled with the throttle that refused (Limit requests per Window) and
// the time until one more request is admitted.
type ThrottleError struct {
	Limit      int
	Window     time.Duration
	RetryAfter time.Duration
}

func (e *ThrottleError) Error() string { return ErrThrottled.Error() }
func (e *ThrottleError) Unwrap() error { return ErrThrottled }
func (e *ThrottleError) Seconds() int  { return int((e.RetryAfter + time.Second - 1) / time.Second) }

// FieldError is one broken field rule; Field is the JSON name.
type FieldError struct {
	Field   string
	Message string
}

// ValidationError lists every broken field rule of a request. When the request was a webhook,
// Transaction is the rejected record kept for the audit.
type ValidationError struct {
	Fields      []FieldError
	Transaction *Transaction
}

func (e *ValidationError) Error() string {
	return "topup: invalid request: " + describeFields(e.Fields)
}

// describeFields lists broken rules as "field: message; field: message".
func describeFields(fields []FieldError) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Field + ": " + f.Message
	}
	return strings.Join(parts, "; ")
}

func (e *ValidationError) Unwrap() error { return ErrInvalidRequest }

// RejectedError is a webhook invoice recorded rejected; Transaction is that record and
// Detail the reason in words, e.g. "AMOUNT_MISMATCH: amount 3.02 differs from 3.00 expected
// for RECCARRIER3".
type RejectedError struct {
	Transaction *Transaction
	Detail      string
}

func (e *RejectedError) Error() string {
	return "topup: invoice rejected: " + cmp.Or(e.Detail, e.Transaction.RejectionReason)
}

func (e *RejectedError) Unwrap() error { return ErrRejected }

// DuplicateError is ErrDuplicateInvoice: a source_xml_hash already recorded. Original is the
// transaction that holds the hash; Transaction is the rejected record kept for the repeated
// delivery; Reason is ReasonDuplicate (the only one: idempotency is by the hash alone, and the
// same invoice_number under another hash is a new top-up).
type DuplicateError struct {
	Original    *Transaction
	Transaction *Transaction
	Reason      string
}

func (e *DuplicateError) Error() string {
	if e.Original != nil {
		return fmt.Sprintf("topup: invoice already processed (transaction %s)", e.Original.ID)
	}
	return ErrDuplicateInvoice.Error()
}

func (e *DuplicateError) Unwrap() error { return ErrDuplicateInvoice }

// CarrierError is a carrier call that did not succeed: for a top-up, Transaction is the record
// in its new status (failed or unavailable); for a query the carrier did not answer, nil. Err
// is the carrier package's error (a *carrier.Error, *carrier.FaultError or
// *carrier.TransportError, reached with errors.As/Is through this one).
type CarrierError struct {
	Transaction *Transaction
	Err         error
}

func (e *CarrierError) Error() string { return e.Err.Error() }
func (e *CarrierError) Unwrap() error { return e.Err }

// ErrNotRecorded: the carrier answered a top-up whose outcome could not be written. The concrete
// error is an *UnrecordedError.
var ErrNotRecorded = errors.New("topup: the carrier's answer could not be recorded")

// UnrecordedError is a top-up sent to the carrier whose answer could not be written, even after
// retrying: Transaction is the record as it stays, pending, with its ids; the reconciler asks the
// carrier about it and settles it. It must not be sent again by hand.
type UnrecordedError struct {
	Transaction *Transaction
	Err         error
}

func (e *UnrecordedError) Error() string {
	return fmt.Sprintf("topup: the carrier's answer to transaction %s could not be recorded; it is being reconciled", e.Transaction.ID)
}

func (e *UnrecordedError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotRecorded) hold.
func (e *UnrecordedError) Is(target error) bool { return target == ErrNotRecorded }
