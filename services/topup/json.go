package main

import (
	"encoding/json"

	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/topup"
)

// transactionJSON is a transaction as the list shows it: every field of the specification's
// table by its name (id as transaction_id), absent values as null, amount as a JSON number with
// two decimals, timestamps in httpx.TimeLayout (UTC, milliseconds, as every answer of both
// services), except the raw carrier XML (raw_request_xml, raw_response_xml): about 1.1 KB of
// escaped XML per top-up, half of each item, which a page does not need and the detail keeps.
type transactionJSON struct {
	TransactionID         string           `json:"transaction_id"`
	ExternalTransactionID *string          `json:"external_transaction_id"`
	ExternalOperation     *string          `json:"external_operation"`
	Source                string           `json:"source"`
	SubscriberID          *string          `json:"subscriber_id"`
	OfferID               *string          `json:"offer_id"`
	Quantity              int              `json:"quantity"`
	Canton                *string          `json:"canton"`
	Status                string           `json:"status"`
	InvoiceNumber         *string          `json:"invoice_number"`
	InvoiceCode           *string          `json:"invoice_code"`
	NotificationEmail     *string          `json:"notification_email"`
	SourceXMLHash         *string          `json:"source_xml_hash"`
	ProductCode           *string          `json:"product_code"`
	Amount                *json.RawMessage `json:"amount"`
	RejectionReason       *string          `json:"rejection_reason"`
	IgnoredReason         *string          `json:"ignored_reason"`
	RetryCount            int              `json:"retry_count"`
	CarrierIDRecarga      *string          `json:"carrier_id_recarga"`
	CarrierIDCodigo       *string          `json:"carrier_id_codigo"`
	CarrierMessage        *string          `json:"carrier_message"`
	CarrierSystemMessage  *string          `json:"carrier_system_message"`
	CarrierResultCode     *string          `json:"carrier_result_code"`
	CarrierDiagnostic     *string          `json:"carrier_diagnostic"`
	RequestedByUserID     *string          `json:"requested_by_user_id"`
	RequestedByUsername   *string          `json:"requested_by_username"`
	RequestedByEmail      *string          `json:"requested_by_email"`
	Incident              bool             `json:"incident"`
	IncidentNote          *string          `json:"incident_note"`
	LastReconciledAt      *httpx.Time      `json:"last_reconciled_at"`
	RetriesExhaustedAt    *httpx.Time      `json:"retries_exhausted_at"`
	CreatedAt             httpx.Time       `json:"created_at"`
	UpdatedAt             httpx.Time       `json:"updated_at"`
	SourcePayload         *json.RawMessage `json:"source_payload"`
}

// transactionDetailJSON is GET /transactions/:id: the list's fields, the raw XML of the last
// top-up exchange (null when none) and the audit (carrier_calls, notifications).
type transactionDetailJSON struct {
	transactionJSON
	RawRequestXML  *string            `json:"raw_request_xml"`
	RawResponseXML *string            `json:"raw_response_xml"`
	CarrierCalls   []carrierCallJSON  `json:"carrier_calls"`
	Notifications  []notificationJSON `json:"notifications"`
}

type carrierCallJSON struct {
	Function    string     `json:"function"`
	Outcome     string     `json:"outcome"`
	RequestXML  *string    `json:"request_xml"`
	ResponseXML *string    `json:"response_xml"`
	Diagnostic  *string    `json:"diagnostic"`
	DurationMS  int64      `json:"duration_ms"`
	At          httpx.Time `json:"at"`
}

type notificationJSON struct {
	Kind       string     `json:"kind"`
	State      string     `json:"state"`
	Attempt    int        `json:"attempt"`
	Recipients []string   `json:"recipients"`
	At         httpx.Time `json:"at"`
	// LastError is the error of the last failed attempt (a temporary SMTP failure, or the
	// refusal that cancelled the job); null when none.
	LastError  *string        `json:"last_error"`
	Deliveries []deliveryJSON `json:"deliveries"`
}

// deliveryJSON is the outcome for one recipient: "sent" or "rejected" (with the server's answer).
type deliveryJSON struct {
	Recipient string     `json:"recipient"`
	State     string     `json:"state"`
	Detail    *string    `json:"detail"`
	At        httpx.Time `json:"at"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toJSON(t *topup.Transaction) transactionJSON {
	out := transactionJSON{
		TransactionID:         t.ID.String(),
		ExternalTransactionID: nullable(t.ExternalTransactionID),
		ExternalOperation:     nullable(string(t.ExternalOperation)),
		Source:                string(t.Source),
		SubscriberID:          nullable(t.SubscriberID),
		OfferID:               nullable(t.OfferID),
		Quantity:              t.Quantity,
		Canton:                nullable(t.Canton),
		Status:                string(t.Status),
		InvoiceNumber:         nullable(t.InvoiceNumber),
		InvoiceCode:           nullable(t.InvoiceCode),
		NotificationEmail:     nullable(t.NotificationEmail),
		SourceXMLHash:         nullable(t.SourceXMLHash),
		ProductCode:           nullable(t.ProductCode),
		RejectionReason:       nullable(t.RejectionReason),
		IgnoredReason:         nullable(t.IgnoredReason),
		RetryCount:            t.RetryCount,
		CarrierIDRecarga:      nullable(t.CarrierIDRecarga),
		CarrierIDCodigo:       nullable(t.CarrierIDCodigo),
		CarrierMessage:        nullable(t.CarrierMessage),
		CarrierSystemMessage:  nullable(t.CarrierSystemMessage),
		CarrierResultCode:     nullable(t.CarrierResultCode),
		CarrierDiagnostic:     nullable(t.CarrierDiagnostic),
		RequestedByUserID:     nullable(t.RequestedByUserID),
		RequestedByUsername:   nullable(t.RequestedByUsername),
		RequestedByEmail:      nullable(t.RequestedByEmail),
		Incident:              t.Incident,
		IncidentNote:          nullable(t.IncidentNote),
		CreatedAt:             httpx.Time(t.CreatedAt),
		UpdatedAt:             httpx.Time(t.UpdatedAt),
		RetriesExhaustedAt:    httpx.TimePtr(t.RetriesExhaustedAt.Time),
		LastReconciledAt:      httpx.TimePtr(t.LastReconciledAt.Time),
	}
	if t.Amount.Valid {
		raw := json.RawMessage(t.Amount.Decimal.StringFixed(2))
		out.Amount = &raw
	}
	if t.SourcePayload != "" {
		raw := json.RawMessage(t.SourcePayload)
		if !json.Valid(raw) {
			b, _ := json.Marshal(t.SourcePayload)
			raw = b
		}
		out.SourcePayload = &raw
	}
	return out
}

// toDetailJSON is t for the detail, with empty audit lists for the caller to fill.
func toDetailJSON(t *topup.Transaction) transactionDetailJSON {
	return transactionDetailJSON{
		transactionJSON: toJSON(t),
		RawRequestXML:   nullable(t.RawRequestXML),
		RawResponseXML:  nullable(t.RawResponseXML),
		CarrierCalls:    []carrierCallJSON{},
		Notifications:   []notificationJSON{},
	}
}
