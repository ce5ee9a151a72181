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
)

// answerErrors is the error handler of the service's routes: every error a route returns (its
// authentication included) is answered here with errorAnswer. An error that is not the
// service's goes on to httpx, which answers it in the envelope: its own *httpx.Error
// (credentials, body decoding), or an unknown failure, a 500 whose cause goes to the log only.
func answerErrors(c *fiber.Ctx) error {
	err := c.Next()
	if err == nil {
		return nil
	}
	status, body := errorAnswer(err)
	if body == nil {
		return err
	}
	var te *topup.ThrottleError
	if errors.As(err, &te) {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(te.Seconds()))
	}
	return c.Status(status).JSON(body)
}

// errorAnswer is the one function from domain and SDK errors to the HTTP status and body
// (doc.go, "Statuses"; DESIGN.md, "Decisions"). A nil body leaves the answer to httpx: an
// *httpx.Error, or an error nobody knows (500).
func errorAnswer(err error) (status int, body any) {
	var (
		he       *httpx.Error
		topupErr *topup.CarrierError
		business *carrier.Error
		fault    *carrier.FaultError
	)
	switch {
	case errors.As(err, &he):
		return he.Status, nil
	case errors.Is(err, topup.ErrInvalidRequest):
		status = http.StatusBadRequest
	case errors.Is(err, topup.ErrActionTokenUsed), errors.Is(err, topup.ErrActionTokenInvalid):
		status = http.StatusUnauthorized
	case errors.Is(err, topup.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, topup.ErrDuplicateInvoice), errors.Is(err, topup.ErrConflict):
		status = http.StatusConflict
	case errors.Is(err, topup.ErrRejected), errors.Is(err, topup.ErrChargeNotConfirmed):
		status = http.StatusUnprocessableEntity
	case errors.Is(err, topup.ErrThrottled), errors.Is(err, topup.ErrDailyLimit):
		status = http.StatusTooManyRequests
	case carrier.IsTimeout(err):
		status = http.StatusGatewayTimeout
	case errors.As(err, &topupErr) && errors.As(err, &business):
		// A top-up the carrier refused (failed): a business outcome of the request.
		status = http.StatusUnprocessableEntity
	case errors.As(err, &business), errors.As(err, &fault), carrier.IsTransport(err), errors.As(err, &topupErr):
		// The SPR refused a query, answered a SOAP fault, or could not be reached.
		status = http.StatusBadGateway
	default:
		return http.StatusInternalServerError, nil
	}
	return status, errorBody(status, err)
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
	)
	switch {
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
	var (
		be *carrier.Error
		fe *carrier.FaultError
	)
	switch {
	case errors.As(err, &be):
		return cmp.Or(be.Message, be.SystemMessage, "the carrier refused the top-up (ID_CODIGO "+be.Code+")")
	case errors.Is(err, carrier.ErrIPNotAuthorized):
		return "the carrier does not authorize this service's outgoing IP address (fault 350)"
	case errors.As(err, &fe):
		return "SOAP fault " + fe.Code + ": " + fe.String
	case carrier.IsTimeout(err):
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
	var (
		be *carrier.Error
		fe *carrier.FaultError
		te *carrier.TransportError
	)
	switch {
	case errors.As(err, &be):
		return httpx.UpstreamMessage{Message: "The carrier rejected the request", UpstreamMessage: cmp.Or(be.Message, be.SystemMessage), Operation: be.Op, UpstreamCode: be.Code}, true
	case errors.As(err, &fe):
		msg := "The carrier answered a SOAP fault"
		if errors.Is(err, carrier.ErrIPNotAuthorized) {
			msg = "The carrier does not authorize this service's outgoing IP address"
		}
		return httpx.UpstreamMessage{Message: msg, UpstreamMessage: fe.String, Operation: fe.Op, UpstreamCode: fe.Code}, true
	case errors.As(err, &te):
		// The transport error itself names the SPR's URL and host (and the resolver's or the
		// dialer's view of them): it stays in the log and in carrier_diagnostic, never here.
		msg, upstream := "The carrier SPR could not be reached", upstreamUnavailable
		if carrier.IsTimeout(err) {
			msg, upstream = "The carrier did not answer within the timeout", upstreamTimeout
		}
		code := ""
		if te.HTTPStatus != 0 {
			code = fmt.Sprint(te.HTTPStatus)
		}
		return httpx.UpstreamMessage{Message: msg, UpstreamMessage: upstream, Operation: te.Op, UpstreamCode: code}, true
	}
	return httpx.UpstreamMessage{}, false
}
