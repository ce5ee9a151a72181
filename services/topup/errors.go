package main

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/topup"
)

// statusOf is the one place where domain and SDK errors become HTTP statuses (DESIGN.md,
// "Decisions"): bodies are built by mapError (the envelope) or by the handlers that answer a
// record instead (recharge's logical rejection, the webhook's rejection), always with this
// status.
func statusOf(err error) int {
	var (
		topupFailure *topup.CarrierError
		business     *carrier.Error
	)
	switch {
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
	case carrier.IsTimeout(err):
		return http.StatusGatewayTimeout
	case errors.As(err, &topupFailure) && errors.As(err, &business):
		// A top-up the carrier refused (failed): a business outcome of the request.
		return http.StatusUnprocessableEntity
	case errors.As(err, &business), isCarrierError(err):
		// The SPR refused a query, answered a SOAP fault, or could not be reached.
		return http.StatusBadGateway
	}
	return http.StatusInternalServerError
}

func isCarrierError(err error) bool {
	var (
		fe *carrier.FaultError
		ce *topup.CarrierError
	)
	return errors.As(err, &fe) || carrier.IsTransport(err) || errors.As(err, &ce)
}

// mapError is httpx's ErrorMapper: the envelope for every error a handler returns.
func mapError(err error) *httpx.Error {
	status := statusOf(err)
	var ve *topup.ValidationError
	if errors.As(err, &ve) {
		problems := make([]string, len(ve.Fields))
		for i, f := range ve.Fields {
			problems[i] = f.Field + " " + f.Message
		}
		return httpx.ValidationError(problems...)
	}
	var (
		te *topup.ThrottleError
		de *topup.DuplicateError
	)
	switch {
	case status == http.StatusInternalServerError:
		return nil // httpx answers a 500 without internals and logs err
	case errors.As(err, &te):
		return httpx.WrapError(status, fmt.Sprintf("Too many top-up requests: at most %d per %d s; retry in %d s", te.Limit, int(te.Window.Seconds()), te.Seconds()), err)
	case errors.Is(err, topup.ErrDailyLimit):
		return httpx.WrapError(status, "Daily top-up limit reached", err)
	case errors.Is(err, topup.ErrActionTokenUsed):
		return httpx.WrapError(status, "Action token already used", err)
	case errors.Is(err, topup.ErrActionTokenInvalid):
		return httpx.WrapError(status, "Invalid action token", err)
	case errors.As(err, &de) && de.Original != nil:
		return httpx.WrapError(status, "Invoice already processed (transaction "+de.Original.ID.String()+")", err)
	case errors.Is(err, topup.ErrDuplicateInvoice):
		return httpx.WrapError(status, "Invoice already processed", err)
	case errors.Is(err, topup.ErrNotFound):
		return httpx.WrapError(status, "Transaction not found", err)
	case errors.Is(err, topup.ErrConflict):
		return httpx.WrapError(status, "The transaction changed concurrently; try again", err)
	case errors.Is(err, topup.ErrChargeNotConfirmed):
		return httpx.WrapError(status, err.Error(), err)
	case status == http.StatusBadGateway || status == http.StatusGatewayTimeout || status == http.StatusUnprocessableEntity:
		if um, ok := upstreamMessage(err); ok {
			return httpx.UpstreamError(status, um, err)
		}
	}
	return httpx.WrapError(status, http.StatusText(status), err)
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
