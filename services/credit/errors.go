package main

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/platform/integrations/credit/clients"
	"github.com/platform/integrations/credit/consumption"
	"github.com/platform/integrations/credit/payments"
	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/validation"
	"github.com/platform/integrations/upstream"
)

// upstreamMessage of a 502 for a transport failure: generic, as the top-up service's "carrier
// unavailable", never the transport error (it may name the upstream's host or URL).
const (
	upstreamUnavailableCreditsystem = "creditsystem unavailable"
	upstreamUnavailableERP          = "ERP unavailable"
)

// mapError is the credit service's one function from domain and SDK errors to HTTP answers
// (DESIGN.md, Errors and Decisions); handlers only return errors. It returns nil for an error it
// does not know, which httpx answers 500 without internals.
func mapError(err error) *httpx.Error {
	var (
		invalid    *validation.Error
		notFound   *clients.NotFoundError
		exists     *clients.ExistsError
		syncErr    *clients.SyncError
		unrecorded *consumption.UnrecordedError
		held       *consumption.HeldError
		pagoLost   *payments.UnrecordedError
		recorded   *payments.RecordedError
		rules      *payments.RuleError
	)
	switch {
	case errors.As(err, &invalid):
		return httpx.ValidationError(invalid.Strings()...)
	case errors.As(err, &unrecorded):
		// The creditsystem acted and its answer could not be written: the ids go back with the
		// answer, and what happens next (docs: "When something fails").
		he := &httpx.Error{Status: http.StatusInternalServerError, Message: unrecorded.Error(), Err: err}
		he.Body = unrecordedJSON{Envelope: he.Envelope(), AutorizacionID: unrecorded.AutorizacionID,
			NumeroOperacion: numeroOperacion(unrecorded.NumeroOperacion), Operation: unrecorded.Operacion}
		return he
	case errors.As(err, &held):
		// A timeout or a lost connection on an existing authorization: the record is held until
		// reconciled, and the answer names it as GET /consumo/:autorizacion_id shows it.
		he := upstreamAnswer(held.Err, "", "")
		if he == nil {
			he = &httpx.Error{Status: http.StatusInternalServerError, Message: http.StatusText(http.StatusInternalServerError), Err: err}
		}
		rec := held.Consumo
		he.Body = consumoHeldJSON{Envelope: he.Envelope(), AutorizacionID: rec.AutorizacionID,
			NumeroOperacion: numeroOperacion(rec.NumeroOperacion), Estado: string(rec.Estado),
			OperacionEnCurso: text(rec.OperacionEnCurso), ResultadoDesconocido: rec.ResultadoDesconocido}
		return he

	case errors.As(err, &pagoLost):
		he := &httpx.Error{Status: http.StatusInternalServerError, Message: pagoLost.Error(), Err: err}
		he.Body = pagoUnrecordedJSON{Envelope: he.Envelope(), ID: pagoLost.PagoID, NumeroOperacion: pagoLost.NumeroOperacion, Operation: pagoLost.Operacion}
		return he
	case errors.As(err, &recorded):
		// An upstream failure that left a ledger record: the answer names it.
		he := mapError(recorded.Err)
		if he == nil {
			he = &httpx.Error{Status: http.StatusInternalServerError, Message: http.StatusText(http.StatusInternalServerError), Err: err}
		}
		he.Body = pagoErrorJSON{Envelope: he.Envelope(), ID: recorded.Pago.ID, NumeroOperacion: recorded.Pago.NumeroOperacion,
			Estado: string(recorded.Pago.Estado)}
		return he

	// Client registry.
	case errors.As(err, &exists):
		return &httpx.Error{Status: http.StatusConflict, Message: exists.Error(), Body: existsAnswer(exists), Err: err}
	case errors.As(err, &notFound):
		return httpx.WrapError(http.StatusNotFound, "No local client with codigo_cliente "+notFound.Codigo, err)
	case errors.Is(err, clients.ErrNotFound):
		return httpx.WrapError(http.StatusNotFound, "Client not found", err)
	case errors.Is(err, clients.ErrExists):
		return httpx.WrapError(http.StatusConflict, "A client with this identificacion and codigo_empresa already exists", err)
	case errors.Is(err, clients.ErrCodigoClienteTaken):
		return httpx.WrapError(http.StatusConflict, "codigo_cliente already belongs to another client", err)
	case errors.Is(err, clients.ErrSyncInProgress):
		return httpx.WrapError(http.StatusConflict, "An ERP synchronization of this client is already in progress", err)
	case errors.As(err, &syncErr):
		// The ERP failure is answered under the client operation (create/update), not the
		// SDK's SyncClient.
		return upstreamAnswer(syncErr.Err, syncErr.Operation.String(), "the client "+syncErr.Operation.String())

	// Consumption.
	case errors.Is(err, consumption.ErrAutorizacionNotFound):
		return httpx.WrapError(http.StatusNotFound, err.Error(), err)
	case errors.Is(err, consumption.ErrInvalidState):
		return httpx.WrapError(http.StatusBadRequest, err.Error(), err)
	case errors.Is(err, consumption.ErrInFlight), errors.Is(err, consumption.ErrOutcomeUnknown):
		return httpx.WrapError(http.StatusConflict, err.Error(), err)

	// Payments.
	case errors.As(err, &rules):
		return httpx.WrapError(http.StatusUnprocessableEntity, rules.Error(), err)
	case errors.Is(err, payments.ErrPagoNotFound):
		return httpx.WrapError(http.StatusNotFound, err.Error(), err)
	case errors.Is(err, payments.ErrInvalidState):
		return httpx.WrapError(http.StatusBadRequest, err.Error(), err)
	case errors.Is(err, payments.ErrInFlight), errors.Is(err, payments.ErrOutcomeUnknown):
		return httpx.WrapError(http.StatusConflict, err.Error(), err)
	}
	return upstreamAnswer(err, "", "")
}

// unrecordedJSON is the 500 of an operation the creditsystem applied but the service could not
// record: the envelope and the ids.
type unrecordedJSON struct {
	httpx.Envelope
	AutorizacionID  string          `json:"autorizacion_id"`
	NumeroOperacion json.RawMessage `json:"numero_operacion"`
	Operation       string          `json:"operation"`
}

// consumoHeldJSON is the 504 (or the 502 of a connection lost after the request left) of an
// operation on an existing authorization: the envelope and the record it left held.
type consumoHeldJSON struct {
	httpx.Envelope
	AutorizacionID       string          `json:"autorizacion_id"`
	NumeroOperacion      json.RawMessage `json:"numero_operacion"`
	Estado               string          `json:"estado"`
	OperacionEnCurso     *string         `json:"operacion_en_curso"`
	ResultadoDesconocido bool            `json:"resultado_desconocido"`
}

// pagoUnrecordedJSON is the 500 of a payment operation the creditsystem applied but the service
// could not record: the envelope and the ids.
type pagoUnrecordedJSON struct {
	httpx.Envelope
	ID              int64  `json:"id"`
	NumeroOperacion *int64 `json:"numeroOperacion"`
	Operation       string `json:"operation"`
}

// pagoErrorJSON is an error answer that left a ledger record: the envelope and the record.
type pagoErrorJSON struct {
	httpx.Envelope
	ID              int64  `json:"id"`
	NumeroOperacion *int64 `json:"numeroOperacion"`
	Estado          string `json:"estado"`
}

// upstreamAnswer maps an SDK error by its kind (docs/sdk-conventions.md), nil when err is none:
//
//   - creditsystem customer without card (nNumeroError 2): 404;
//   - a rejection (lError = true, error_api, an ERP error status) and a SOAP fault: 502 with
//     {message, upstreamMessage, operation, upstreamCode} (translation rule 4's 422 is
//     overridden; 422 is for local business validation);
//   - a timeout: 504 naming the operation; never retried by the service;
//   - other transport failures (refused, dropped, undecodable): 502 naming the operation, with
//     the generic upstreamMessage "creditsystem unavailable" / "ERP unavailable" (the detail,
//     which may name hosts, stays in the log).
//
// op and what, when set, replace the SDK's operation name in the answer ("update", "the client
// update").
func upstreamAnswer(err error, op, what string) *httpx.Error {
	ue, ok := upstream.As(err)
	if !ok {
		return nil
	}
	if errors.Is(err, creditsystem.ErrCardNotFound) {
		return httpx.WrapError(http.StatusNotFound, "Customer without card", err)
	}
	system, unavailable := "The creditsystem", upstreamUnavailableCreditsystem
	if isERP(err) {
		system, unavailable = "The ERP", upstreamUnavailableERP
	}
	o, w := ue.Operation(), "the operation "+ue.Operation()
	if op != "" {
		o, w = op, what
	}
	switch {
	case ue.Kind() == upstream.Rejected:
		return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
			Message: system + " rejected " + w, UpstreamMessage: ue.ErrorMessage(), Operation: o, UpstreamCode: ue.ErrorCode(),
		}, err)
	case ue.Kind() == upstream.Fault:
		return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
			Message: system + " answered " + w + " with a SOAP fault", UpstreamMessage: ue.ErrorMessage(), Operation: o, UpstreamCode: ue.ErrorCode(),
		}, err)
	}
	called := o
	if op != "" {
		called = what
	}
	if ue.Timeout() {
		return httpx.WrapError(http.StatusGatewayTimeout, system+" did not answer "+called+" within the timeout", err)
	}
	return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
		Message: system + " could not be reached for " + called, UpstreamMessage: unavailable, Operation: o,
	}, err)
}

// isERP tells the ERP's errors from the creditsystem's, for the answer's wording.
func isERP(err error) bool {
	var (
		e *erp.Error
		t *erp.TransportError
	)
	return errors.As(err, &e) || errors.As(err, &t)
}
