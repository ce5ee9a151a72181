package main

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/topup"
	"github.com/platform/integrations/upstream"
)

// mapError is the service's one function from domain and SDK errors to the HTTP answer
// (doc.go, "Statuses"; DESIGN.md, "Decisions"): httpx's ErrorMapper, so that every error a
// route returns, its authentication included, is answered and logged in one place. nil leaves the
// answer to httpx: an error nobody knows is a 500 whose cause goes to the log only.
func mapError(err error) *httpx.Error {
	status := statusOf(err)
	if status == 0 {
		return nil
	}
	he := &httpx.Error{Status: status, Body: errorBody(status, err), Err: err}
	var te *topup.ThrottleError
	if errors.As(err, &te) {
		he.Headers = map[string]string{fiber.HeaderRetryAfter: strconv.Itoa(te.Seconds())}
	}
	return he
}

// statusOf is the status of a domain or SDK error, 0 for an error that is neither. Carrier
// errors are read by kind (docs/sdk-conventions.md).
func statusOf(err error) int {
	var carrierErr *topup.CarrierError
	switch kind := upstream.KindOf(err); {
	case errors.Is(err, topup.ErrNotRecorded):
		// The carrier answered and the answer could not be written: the ids go back with it.
		return http.StatusInternalServerError
	case errors.Is(err, topup.ErrInvalidRequest):
		return http.StatusBadRequest
	case errors.Is(err, topup.ErrActionTokenUsed), errors.Is(err, topup.ErrActionTokenInvalid):
		return http.StatusUnauthorized
	case errors.Is(err, topup.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, topup.ErrDuplicateInvoice), errors.Is(err, topup.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, topup.ErrRejected), errors.Is(err, topup.ErrChargeNotConfirmed):
		return http.StatusUnprocessableEntity
	case errors.Is(err, topup.ErrThrottled), errors.Is(err, topup.ErrDailyLimit):
		return http.StatusTooManyRequests
	case upstream.IsTimeout(err):
		return http.StatusGatewayTimeout
	case errors.As(err, &carrierErr) && carrierErr.Transaction != nil && kind == upstream.Rejected:
		// A top-up the carrier refused (failed): a business outcome of the request.
		return http.StatusUnprocessableEntity
	case kind != 0, carrierErr != nil:
		// The SPR refused a query, answered a SOAP fault, or could not be reached.
		return http.StatusBadGateway
	}
	return 0
}

// errorBody is the body of an error answer of status: when the error carries a record, the
// answer doc.go gives for it (/recharge's logical rejection for a top-up that did not succeed,
// the webhook's rejection response, the envelope plus the record for a webhook delivery
// refused as an invalid payload or a repeated invoice); otherwise the envelope.
func errorBody(status int, err error) any {
	var (
		ce *topup.CarrierError
		re *topup.RejectedError
		ve *topup.ValidationError
		de *topup.DuplicateError
		ue *topup.UnrecordedError
	)
	switch {
	case errors.As(err, &ue):
		t := ue.Transaction
		const text = "the carrier answered, but its answer could not be recorded: the top-up is being reconciled; do not send it again, look the transaction up"
		if t.Source == topup.SourceDashboard {
			return rechargeAnswer{TransactionID: t.ID.String(), ExternalTransactionID: t.ExternalTransactionID,
				Status: string(t.Status), Error: text, Message: "ERROR"}
		}
		return webhookAnswer{TransactionID: t.ID.String(), ExternalTransactionID: t.ExternalTransactionID, Source: string(t.Source),
			InvoiceNumber: nullable(t.InvoiceNumber), Status: string(t.Status), Error: text}
	case errors.As(err, &ce) && ce.Transaction != nil:
		t := ce.Transaction
		a := rechargeAnswer{
			TransactionID:         t.ID.String(),
			ExternalTransactionID: t.ExternalTransactionID,
			Status:                string(t.Status),
			Error:                 carrierErrorText(ce.Err),
			Message:               "ERROR",
		}
		if t.CarrierIDCodigo != "" {
			a.CarrierIDCodigo = &t.CarrierIDCodigo
		}
		return a
	case errors.As(err, &re) && re.Transaction != nil:
		t := re.Transaction
		return webhookAnswer{
			TransactionID: t.ID.String(),
			Source:        string(t.Source),
			InvoiceNumber: nullable(t.InvoiceNumber),
			Status:        string(t.Status),
			Error:         t.RejectionReason,
			Message:       re.Detail,
		}
	case errors.As(err, &ve) && ve.Transaction != nil:
		return newWebhookErrorBody(envelope(status, err), ve.Transaction, topup.ReasonInvalidPayload, nil)
	case errors.As(err, &de) && de.Transaction != nil:
		return newWebhookErrorBody(envelope(status, err), de.Transaction, de.Reason, de.Original)
	}
	return envelope(status, err)
}

// envelope is the error envelope {"status":"error","statusCode":N,"message":...,"errors":[...]}
// for err answered with status.
func envelope(status int, err error) httpx.Envelope {
	var (
		ve *topup.ValidationError
		te *topup.ThrottleError
		de *topup.DuplicateError
	)
	msg := http.StatusText(status)
	switch {
	case errors.As(err, &ve):
		problems := make([]string, len(ve.Fields))
		for i, f := range ve.Fields {
			problems[i] = f.Field + " " + f.Message
		}
		return httpx.ValidationError(problems...).Envelope()
	case errors.As(err, &te):
		msg = fmt.Sprintf("Too many top-up requests: at most %d per %d s; retry in %d s", te.Limit, int(te.Window.Seconds()), te.Seconds())
	case errors.Is(err, topup.ErrDailyLimit):
		msg = "Daily top-up limit reached"
	case errors.Is(err, topup.ErrActionTokenUsed):
		msg = "Action token already used"
	case errors.Is(err, topup.ErrActionTokenInvalid):
		msg = "Invalid action token"
	case errors.As(err, &de) && de.Original != nil:
		msg = "Invoice already processed (transaction " + de.Original.ID.String() + ")"
	case errors.Is(err, topup.ErrDuplicateInvoice):
		msg = "Invoice already processed"
	case errors.Is(err, topup.ErrNotFound):
		msg = "Transaction not found"
	case errors.Is(err, topup.ErrConflict):
		msg = "The transaction changed concurrently; try again"
	case errors.Is(err, topup.ErrChargeNotConfirmed):
		msg = err.Error()
	default:
		if um, ok := upstreamMessage(err); ok {
			return httpx.UpstreamError(status, um, err).Envelope()
		}
	}
	return httpx.NewError(status, msg).Envelope()
}

// webhookErrorBody is the envelope plus the record a refused webhook delivery left (doc.go,
// "Webhook bodies"); status stays the envelope's "error".
type webhookErrorBody struct {
	httpx.Envelope
	Success               bool    `json:"success"`
	TransactionID         string  `json:"transaction_id"`
	Source                string  `json:"source"`
	InvoiceNumber         *string `json:"invoice_number"`
	Error                 string  `json:"error"`
	OriginalTransactionID string  `json:"original_transaction_id,omitempty"`
	OriginalStatus        string  `json:"original_status,omitempty"`
}

func newWebhookErrorBody(env httpx.Envelope, rec *topup.Transaction, reason string, original *topup.Transaction) webhookErrorBody {
	b := webhookErrorBody{
		Envelope:      env,
		TransactionID: rec.ID.String(),
		Source:        string(rec.Source),
		InvoiceNumber: nullable(rec.InvoiceNumber),
		Error:         reason,
	}
	if original != nil {
		b.OriginalTransactionID, b.OriginalStatus = original.ID.String(), string(original.Status)
	}
	return b
}

// carrierErrorText is the readable cause of a carrier failure for a logical rejection's error
// field.
func carrierErrorText(err error) string {
	ue, _ := upstream.As(err)
	switch kind := upstream.KindOf(err); {
	case kind == upstream.Rejected:
		return cmp.Or(ue.ErrorMessage(), "the carrier refused the top-up (ID_CODIGO "+ue.ErrorCode()+")")
	case errors.Is(err, carrier.ErrIPNotAuthorized):
		return "the carrier does not authorize this service's outgoing IP address (fault 350)"
	case kind == upstream.Fault:
		return "SOAP fault " + ue.ErrorCode() + ": " + ue.ErrorMessage()
	case upstream.IsTimeout(err):
		return "the carrier did not answer within the timeout; the top-up will be reconciled"
	}
	return "the carrier could not be reached; the top-up will be reconciled"
}

// The fixed upstreamMessage of a transport failure, which has no upstream text of its own.
const (
	upstreamUnavailable = "carrier unavailable"
	upstreamTimeout     = "carrier timeout"
)

// upstreamMessage describes a carrier error for the envelope: our text, the carrier's own
// (MENSAJE or faultstring; for a transport failure, which has none, a fixed generic text),
// the carrier function and its code (ID_CODIGO, faultcode or the HTTP status). Nothing in it
// carries a secret or an address: the carrier package scrubs the PASSWORD from everything it
// returns, and the transport error (URL, host) is not copied.
func upstreamMessage(err error) (httpx.UpstreamMessage, bool) {
	ue, ok := upstream.As(err)
	if !ok {
		return httpx.UpstreamMessage{}, false
	}
	m := httpx.UpstreamMessage{Operation: ue.Operation(), UpstreamMessage: ue.ErrorMessage(), UpstreamCode: ue.ErrorCode()}
	switch ue.Kind() {
	case upstream.Rejected:
		m.Message = "The carrier rejected the request"
	case upstream.Fault:
		m.Message = "The carrier answered a SOAP fault"
		if errors.Is(err, carrier.ErrIPNotAuthorized) {
			m.Message = "The carrier does not authorize this service's outgoing IP address"
		}
	default:
		// The transport error itself names the SPR's URL and host (and the resolver's or the
		// dialer's view of them): it stays in the log and in carrier_diagnostic, never here.
		m.Message, m.UpstreamMessage = "The carrier SPR could not be reached", upstreamUnavailable
		if ue.Timeout() {
			m.Message, m.UpstreamMessage = "The carrier did not answer within the timeout", upstreamTimeout
		}
	}
	return m, true
}
