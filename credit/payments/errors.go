package payments

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels of the payments module, reached with errors.Is; the struct errors below carry the
// details and match them.
var (
	// ErrPagoNotFound: no payment of the ledger has the operation number.
	ErrPagoNotFound = errors.New("payments: payment not found")
	// ErrInvalidState: the payment's state does not allow the operation.
	ErrInvalidState = errors.New("payments: state does not allow the operation")
	// ErrRule: a payment rule of the specification is broken (422).
	ErrRule = errors.New("payments: payment rule broken")
	// ErrInFlight: a payment or reversal of the card is in progress.
	ErrInFlight = errors.New("payments: an operation of the card is in progress")
	// ErrOutcomeUnknown: a payment or reversal of the card did not answer in time and may have
	// been applied; a debt query settles it.
	ErrOutcomeUnknown = errors.New("payments: the outcome of an earlier operation is unknown")
	// ErrEntregaNotFound: no ERP hand-over has the id.
	ErrEntregaNotFound = errors.New("payments: ERP hand-over not found")
	// ErrEntregaState: the hand-over's state does not allow what was asked.
	ErrEntregaState = errors.New("payments: the ERP hand-over's state does not allow it")
	// ErrNotRecorded: the creditsystem applied an operation whose outcome could not be written.
	// The concrete error is an *UnrecordedError carrying the ids.
	ErrNotRecorded = errors.New("payments: the creditsystem applied the operation but it could not be recorded")
)

// NotFoundError names the unknown operation number.
type NotFoundError struct{ NumeroOperacion int64 }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("payment %d not found", e.NumeroOperacion)
}

// Is makes errors.Is(err, ErrPagoNotFound) hold.
func (e *NotFoundError) Is(target error) bool { return target == ErrPagoNotFound }

// StateError names the payment, its state and the refused operation.
type StateError struct {
	Pago      *Pago
	Operacion string
}

func (e *StateError) Error() string {
	return fmt.Sprintf("payment %s is in state %s, which does not allow %s", pagoName(e.Pago), e.Pago.Estado, e.Operacion)
}

// Is makes errors.Is(err, ErrInvalidState) hold.
func (e *StateError) Is(target error) bool { return target == ErrInvalidState }

// RuleError lists the payment rules a request breaks, in words a cashier understands.
type RuleError struct{ Rules []string }

func (e *RuleError) Error() string { return strings.Join(e.Rules, "; ") }

// Is makes errors.Is(err, ErrRule) hold.
func (e *RuleError) Is(target error) bool { return target == ErrRule }

// ConflictError reports the record that holds a card: a payment or reversal in flight, or one
// whose outcome is unknown (Desconocido), which only a debt query of the card settles.
type ConflictError struct {
	Pago        *Pago
	Desconocido bool
}

func (e *ConflictError) Error() string {
	p := e.Pago
	op := "payment"
	if p.OperacionEnCurso != "" {
		op = fmt.Sprintf("reversal of payment %s", pagoName(p))
	}
	if e.Desconocido {
		return fmt.Sprintf("card %s: the %s of %s (ledger id %d) did not answer in time and may have been applied; "+
			"query the debt (POST /pagos/consulta-deuda) before paying again", p.NumeroTarjeta, op, p.ValorPago.StringFixed(2), p.ID)
	}
	return fmt.Sprintf("card %s: a %s (ledger id %d) is in progress; try again when it ends", p.NumeroTarjeta, op, p.ID)
}

// Is makes errors.Is match ErrOutcomeUnknown or ErrInFlight.
func (e *ConflictError) Is(target error) bool {
	if e.Desconocido {
		return target == ErrOutcomeUnknown
	}
	return target == ErrInFlight
}

// UnrecordedError is an operation the creditsystem applied whose answer could not be written,
// even after retrying: the payment stays held, and a debt query of the card settles it.
type UnrecordedError struct {
	PagoID          int64
	NumeroOperacion *int64 // of the payment (nil if the creditsystem gave none)
	Operacion       string // UpstreamGrabarPago or UpstreamGrabarReverso
	Err             error
}

func (e *UnrecordedError) Error() string {
	n := "without an operation number"
	if e.NumeroOperacion != nil {
		n = fmt.Sprintf("%d", *e.NumeroOperacion)
	}
	return fmt.Sprintf("the creditsystem applied %s (payment %s, ledger id %d) but it could not be recorded; "+
		"do not repeat it: query the debt of the card to settle it", e.Operacion, n, e.PagoID)
}

func (e *UnrecordedError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotRecorded) hold.
func (e *UnrecordedError) Is(target error) bool { return target == ErrNotRecorded }

func pagoName(p *Pago) string {
	if p.NumeroOperacion != nil {
		return fmt.Sprintf("%d", *p.NumeroOperacion)
	}
	return fmt.Sprintf("with ledger id %d", p.ID)
}
