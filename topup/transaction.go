package topup

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
)

// Status is the state of a transaction record (specification, "States and transitions").
type Status string

// The statuses of the specification. StatusError is legacy: older manual records carry it and no
// transition involves it; new flows end in StatusFailed or StatusUnavailable.
const (
	StatusPending     Status = "pending"
	StatusSuccess     Status = "success"
	StatusFailed      Status = "failed"
	StatusUnavailable Status = "unavailable"
	StatusRejected    Status = "rejected"
	StatusIgnored     Status = "ignored"
	StatusError       Status = "error"
)

// Statuses lists every status, in the order of the specification.
var Statuses = []Status{StatusPending, StatusSuccess, StatusFailed, StatusUnavailable, StatusRejected, StatusIgnored, StatusError}

// Valid reports whether s is one of Statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if v == s {
			return true
		}
	}
	return false
}

// Source says where a transaction came from.
type Source string

// The sources of the specification.
const (
	SourceDashboard       Source = "dashboard"
	SourceWorkflowWebhook Source = "workflow-webhook"
	SourceWorkflowIgnored Source = "workflow-ignored"
)

// Sources lists every source.
var Sources = []Source{SourceDashboard, SourceWorkflowWebhook, SourceWorkflowIgnored}

// Valid reports whether s is one of Sources.
func (s Source) Valid() bool {
	for _, v := range Sources {
		if v == s {
			return true
		}
	}
	return false
}

// Operation is the carrier's EXTERNALOPERATION.
type Operation string

// The two operations of the specification.
const (
	OperationDatos Operation = "RECARGA_DATOS"
	OperationPines Operation = "RECARGA_PINES"
)

// Valid reports whether o is RECARGA_DATOS or RECARGA_PINES.
func (o Operation) Valid() bool { return o == OperationDatos || o == OperationPines }

// Sentinel errors of the state machine, reached with errors.Is.
var (
	// ErrInvalidTransition: the transition is not in the specification's table from the
	// record's current status. The concrete error is a *TransitionError.
	ErrInvalidTransition = errors.New("topup: transition not allowed")
	// ErrFinal: the record is success, which is final; also reached through ErrInvalidTransition.
	ErrFinal = errors.New("topup: success is final")
	// ErrChargeNotConfirmed: a failed record whose top-up the carrier reports SUCCESS moves to
	// success only when the business confirms the charge.
	ErrChargeNotConfirmed = errors.New("topup: a failed transaction becomes success only when the business confirms the charge")
)

// TransitionError names the refused move.
type TransitionError struct {
	From, To Status
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("topup: transition %s -> %s not allowed", e.From, e.To)
}

// Is makes the error match ErrInvalidTransition, and ErrFinal when the record is success.
func (e *TransitionError) Is(target error) bool {
	return target == ErrInvalidTransition || (target == ErrFinal && e.From == StatusSuccess)
}

// Transaction is the record persisted for every top-up, rejection and ignored e-mail, with
// every field of the specification. Optional text fields are empty strings in Go and NULL in
// the database (nullzero), so the unique keys external_transaction_id and source_xml_hash only
// bind the records that carry them.
type Transaction struct {
	bun.BaseModel `bun:"table:topup_transactions"`

	ID                    uuid.UUID `bun:"id,pk,type:varchar(36)"`
	ExternalTransactionID string    `bun:"external_transaction_id,nullzero"`
	ExternalOperation     Operation `bun:"external_operation,nullzero"`
	Source                Source    `bun:"source,notnull"`
	SubscriberID          string    `bun:"subscriber_id,nullzero"`
	OfferID               string    `bun:"offer_id,nullzero"`
	Quantity              int       `bun:"quantity,notnull"`
	Canton                string    `bun:"canton,nullzero"`
	Status                Status    `bun:"status,notnull"`

	InvoiceNumber     string              `bun:"invoice_number,nullzero"`
	InvoiceCode       string              `bun:"invoice_code,nullzero"`
	NotificationEmail string              `bun:"notification_email,nullzero"`
	SourceXMLHash     string              `bun:"source_xml_hash,nullzero"`
	ProductCode       string              `bun:"product_code,nullzero"`
	Amount            decimal.NullDecimal `bun:"amount,type:numeric"`
	RejectionReason   string              `bun:"rejection_reason,nullzero"`
	// rejectionDetail is RejectionReason in words, for the notification of the rejection.
	rejectionDetail string
	IgnoredReason   string `bun:"ignored_reason,nullzero"`
	// SourcePayload is the original webhook body as JSON text.
	SourcePayload string `bun:"source_payload,nullzero"`
	RetryCount    int    `bun:"retry_count,notnull"`

	CarrierIDRecarga     string `bun:"carrier_id_recarga,nullzero"`
	CarrierIDCodigo      string `bun:"carrier_id_codigo,nullzero"`
	CarrierMessage       string `bun:"carrier_message,nullzero"`
	CarrierSystemMessage string `bun:"carrier_system_message,nullzero"`
	CarrierResultCode    string `bun:"carrier_result_code,nullzero"`
	CarrierDiagnostic    string `bun:"carrier_diagnostic,nullzero"`

	RequestedByUserID   string `bun:"requested_by_user_id,nullzero"`
	RequestedByUsername string `bun:"requested_by_username,nullzero"`
	// RequestedByEmail is the operator's e-mail from the token, kept so that notifications
	// of later status changes (reconciliation) still reach the operator.
	RequestedByEmail string `bun:"requested_by_email,nullzero"`

	// RawRequestXML and RawResponseXML are the last top-up exchange, PASSWORD masked.
	// Every exchange, queries included, is in the carrier call log (CarrierCall).
	RawRequestXML  string `bun:"raw_request_xml,nullzero"`
	RawResponseXML string `bun:"raw_response_xml,nullzero"`

	// Incident marks a local success that the carrier later reported as ERROR: an operational
	// incident, never downgraded automatically.
	Incident     bool   `bun:"incident,notnull"`
	IncidentNote string `bun:"incident_note,nullzero"`

	// RetriesExhaustedAt is when the reconciler gave up on an unavailable record: its retries
	// were spent and the carrier still answered that it does not have the top-up. The record
	// stays unavailable (the specification has no other status for it) but leaves the
	// reconciler's selection; an operator reconciles it with query-recharge.
	RetriesExhaustedAt bun.NullTime `bun:"retries_exhausted_at"`
	LastReconciledAt   bun.NullTime `bun:"last_reconciled_at"`
	// DuplicateOf is, on the record of a repeated webhook delivery, the transaction that holds
	// its hash.
	DuplicateOf string `bun:"duplicate_of,nullzero"`
	// ReconcileLeaseUntil keeps the record out of other reconciler passes while the pass that
	// claimed it may still be waiting for the carrier (ReconcileConfig.Lease).
	ReconcileLeaseUntil bun.NullTime `bun:"reconcile_lease_until"`
	CreatedAt           time.Time    `bun:"created_at,notnull"`
	UpdatedAt           time.Time    `bun:"updated_at,notnull"`
	// Version counts the writes of the record (Store.Update); Store.UpdateHeld compares it.
	Version int64 `bun:"version,notnull"`
}

// CarrierReply is what the SPR answered (or why it did not), copied onto the record.
type CarrierReply struct {
	IDRecarga     string
	IDCodigo      string
	Message       string
	SystemMessage string
	ResultCode    string
	Diagnostic    string
	RequestXML    string // PASSWORD masked
	ResponseXML   string // PASSWORD masked
}

func (t *Transaction) applyReply(r CarrierReply) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&t.CarrierIDRecarga, r.IDRecarga)
	set(&t.CarrierIDCodigo, r.IDCodigo)
	set(&t.CarrierMessage, r.Message)
	set(&t.CarrierSystemMessage, r.SystemMessage)
	set(&t.CarrierResultCode, r.ResultCode)
	t.CarrierDiagnostic = r.Diagnostic
	if r.RequestXML != "" {
		t.RawRequestXML = r.RequestXML
		t.RawResponseXML = r.ResponseXML
	}
}

func (t *Transaction) move(from []Status, to Status) error {
	for _, f := range from {
		if t.Status == f {
			t.Status = to
			return nil
		}
	}
	return &TransitionError{From: t.Status, To: to}
}

// Succeed applies an SPR answer with STATUS = SUCCESS, ID_CODIGO = 0 and no fault: pending -> success.
func (t *Transaction) Succeed(r CarrierReply) error {
	if err := t.move([]Status{StatusPending}, StatusSuccess); err != nil {
		return err
	}
	t.applyReply(r)
	return nil
}

// Fail applies a business error of the SPR (STATUS = ERROR): pending -> failed.
func (t *Transaction) Fail(r CarrierReply) error {
	if err := t.move([]Status{StatusPending}, StatusFailed); err != nil {
		return err
	}
	t.applyReply(r)
	return nil
}

// MakeUnavailable applies a SOAP fault, timeout, refused connection or unreachable SPR:
// pending -> unavailable, counting the pass in RetryCount.
func (t *Transaction) MakeUnavailable(r CarrierReply) error {
	if err := t.move([]Status{StatusPending}, StatusUnavailable); err != nil {
		return err
	}
	t.RetryCount++
	t.applyReply(r)
	return nil
}

// Retry takes an unavailable record back to pending before its top-up is sent again with the
// same external_transaction_id.
func (t *Transaction) Retry() error {
	return t.move([]Status{StatusUnavailable}, StatusPending)
}

// ConfirmRemoteSuccess applies a query-recharge answer of remote SUCCESS: pending and
// unavailable become success (a late success); failed becomes success only when
// chargeConfirmed says the business confirms the charge (ErrChargeNotConfirmed otherwise).
// It reports false with no error when the record already is success.
func (t *Transaction) ConfirmRemoteSuccess(r CarrierReply, chargeConfirmed bool) (changed bool, err error) {
	switch t.Status {
	case StatusSuccess:
		return false, nil
	case StatusFailed:
		if !chargeConfirmed {
			return false, ErrChargeNotConfirmed
		}
	}
	if err := t.move([]Status{StatusPending, StatusUnavailable, StatusFailed}, StatusSuccess); err != nil {
		return false, err
	}
	// The query answer must not overwrite the top-up exchange kept in raw_*_xml.
	r.RequestXML, r.ResponseXML = "", ""
	t.applyReply(r)
	return true, nil
}

// FlagRemoteError records that the carrier answers ERROR for a transaction that is success
// locally. The record stays success: the specification calls this an operational incident that
// is not downgraded automatically. For other statuses it does nothing and reports false.
func (t *Transaction) FlagRemoteError(note string) bool {
	if t.Status != StatusSuccess {
		return false
	}
	t.Incident = true
	t.IncidentNote = note
	return true
}
