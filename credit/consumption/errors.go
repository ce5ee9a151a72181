package consumption

import (
	"errors"
	"fmt"
	"time"
)

// Sentinels of the consumption module, reached with errors.Is; the struct errors below carry
// the details and match them.
var (
	// ErrAutorizacionNotFound: no consumption record has the authorization id.
	ErrAutorizacionNotFound = errors.New("consumption: authorization not found")
	// ErrInvalidState: the record's state does not allow the operation.
	ErrInvalidState = errors.New("consumption: state does not allow the operation")
	// ErrNoInvoice: a consumption reversal needs the stored invoice number.
	ErrNoInvoice = errors.New("consumption: no invoice number stored")
	// ErrInFlight: another request holds the record while it calls the creditsystem.
	ErrInFlight = errors.New("consumption: another operation on the authorization is in progress")
	// ErrOutcomeUnknown: an earlier operation timed out and may have been applied; the record is
	// held until an operator reconciles it.
	ErrOutcomeUnknown = errors.New("consumption: the outcome of an earlier operation is unknown")
	// ErrNotHeld: an internal inconsistency, an outcome written for a marker the record no
	// longer holds (for example because an operator reconciled it meanwhile).
	ErrNotHeld = errors.New("consumption: record not held by the operation")
	// ErrNotRecorded: the creditsystem applied an operation whose outcome could not be written.
	// The concrete error is an *UnrecordedError carrying the ids.
	ErrNotRecorded = errors.New("consumption: the creditsystem applied the operation but it could not be recorded")
	// ErrNothingToReconcile: Reconciliar on a record that holds no in-flight marker.
	ErrNothingToReconcile = errors.New("consumption: no operation to reconcile")
)

// AutorizacionNotFoundError names the unknown authorization id.
type AutorizacionNotFoundError struct{ AutorizacionID string }

func (e *AutorizacionNotFoundError) Error() string {
	return fmt.Sprintf("authorization %s not found", e.AutorizacionID)
}

// Is makes errors.Is(err, ErrAutorizacionNotFound) hold.
func (e *AutorizacionNotFoundError) Is(target error) bool { return target == ErrAutorizacionNotFound }

// StateError names the authorization, its current state and the refused operation.
type StateError struct {
	AutorizacionID string
	Estado         Estado
	Operacion      Operacion
}

func (e *StateError) Error() string {
	return fmt.Sprintf("authorization %s is in state %s, which does not allow %s", e.AutorizacionID, e.Estado, e.Operacion)
}

// Is makes errors.Is(err, ErrInvalidState) hold.
func (e *StateError) Is(target error) bool { return target == ErrInvalidState }

// NoInvoiceError names the consumed authorization that has no invoice number.
type NoInvoiceError struct{ AutorizacionID string }

func (e *NoInvoiceError) Error() string {
	return fmt.Sprintf("authorization %s has no invoice number stored; the consumption cannot be reversed", e.AutorizacionID)
}

// Is makes errors.Is(err, ErrNoInvoice) and errors.Is(err, ErrInvalidState) hold.
func (e *NoInvoiceError) Is(target error) bool {
	return target == ErrNoInvoice || target == ErrInvalidState
}

// ConflictError reports that the record is held by an upstream operation: still in flight, or
// ended with an unknown outcome (ResultadoDesconocido).
type ConflictError struct {
	AutorizacionID       string
	Operacion            string // upstream operation holding the record, e.g. GrabarConsumo
	Desde                time.Time
	ResultadoDesconocido bool
}

func (e *ConflictError) Error() string {
	if e.ResultadoDesconocido {
		return fmt.Sprintf("authorization %s: %s started at %s did not answer in time and may have been applied; "+
			"the authorization is held until an operator reconciles it", e.AutorizacionID, e.Operacion, e.Desde.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("authorization %s: %s is in progress since %s; try again when it ends",
		e.AutorizacionID, e.Operacion, e.Desde.UTC().Format(time.RFC3339))
}

// Is makes errors.Is hold for ErrOutcomeUnknown or ErrInFlight.
func (e *ConflictError) Is(target error) bool {
	if e.ResultadoDesconocido {
		return target == ErrOutcomeUnknown
	}
	return target == ErrInFlight
}

// HeldError is a failed call on an existing authorization whose outcome is unknown (a timeout,
// or a connection lost after the request left): the creditsystem may have applied it. Consumo is
// the record as the failure left it, held by the operation (OperacionEnCurso) with
// ResultadoDesconocido, so that the answer can name it; every later operation on it is a
// *ConflictError until an operator reconciles it. Err is the creditsystem's error, reached
// through Unwrap. (A timed-out authorization has no record: its error is the creditsystem's.)
type HeldError struct {
	Consumo *Consumo
	Err     error
}

func (e *HeldError) Error() string { return e.Err.Error() }

func (e *HeldError) Unwrap() error { return e.Err }

// UnrecordedError is an operation the creditsystem applied whose outcome could not be written,
// even after retrying: the ids the caller needs, and what happens next. A granted authorization
// without a record is reversed automatically (Service.ReversarNoRegistradas); an operation on an
// existing authorization leaves it held, with an unknown outcome, until an operator reconciles it.
type UnrecordedError struct {
	AutorizacionID  string
	NumeroOperacion string
	Operacion       string // the upstream operation, e.g. GrabarConsumo
	// Duplicate: the creditsystem granted an authorization id already recorded for another
	// authorization. Nothing is reversed automatically (the id is the recorded one's too); the
	// attempt keeps the answer for an operator.
	Duplicate bool
	Err       error
}

func (e *UnrecordedError) Error() string {
	if e.Duplicate {
		return fmt.Sprintf("the creditsystem granted authorization %s, an id already recorded for another authorization; it was not recorded and is not reversed automatically: do not use it, an operator must look at it",
			e.AutorizacionID)
	}
	if e.Operacion == UpstreamGrabarAutorizacion {
		return fmt.Sprintf("the creditsystem granted authorization %s but it could not be recorded; it is reversed automatically, do not use it", e.AutorizacionID)
	}
	return fmt.Sprintf("the creditsystem applied %s on authorization %s but it could not be recorded; the authorization is held until it is reconciled, do not repeat the operation",
		e.Operacion, e.AutorizacionID)
}

func (e *UnrecordedError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotRecorded) hold.
func (e *UnrecordedError) Is(target error) bool { return target == ErrNotRecorded }
