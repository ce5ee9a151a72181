package main

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/platform/integrations/credit/clients"
	"github.com/platform/integrations/credit/consumption"
	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/validation"
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
		invalid  *validation.Error
		notFound *clients.NotFoundError
		exists   *clients.ExistsError
		syncErr  *clients.SyncError
	)
	switch {
	case errors.As(err, &invalid):
		return httpx.ValidationError(invalid.Strings()...)

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
	}
	return upstreamAnswer(err, "", "")
}

// upstreamAnswer maps an SDK error, nil when err is none:
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
	var (
		csErr    *creditsystem.Error
		csFault  *creditsystem.FaultError
		csTrans  *creditsystem.TransportError
		erpErr   *erp.APIError
		erpTrans *erp.TransportError
	)
	name := func(sdkOp string) (string, string) {
		if op == "" {
			return sdkOp, "the operation " + sdkOp
		}
		return op, what
	}
	switch {
	case errors.Is(err, creditsystem.ErrCardNotFound):
		return httpx.WrapError(http.StatusNotFound, "Customer without card", err)
	case errors.As(err, &csErr):
		o, w := name(csErr.Op)
		return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
			Message: "The creditsystem rejected " + w, UpstreamMessage: csErr.Message, Operation: o, UpstreamCode: strconv.Itoa(csErr.Code),
		}, err)
	case errors.As(err, &csFault):
		o, w := name(csFault.Op)
		return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
			Message: "The creditsystem answered " + w + " with a SOAP fault", UpstreamMessage: csFault.String, Operation: o, UpstreamCode: csFault.Code,
		}, err)
	case errors.As(err, &csTrans) && creditsystem.IsTimeout(err):
		o, _ := name(csTrans.Op)
		return httpx.WrapError(http.StatusGatewayTimeout, "The creditsystem did not answer "+o+" within the timeout", err)
	case errors.As(err, &csTrans):
		o, _ := name(csTrans.Op)
		return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
			Message: "The creditsystem could not be reached for " + o, UpstreamMessage: upstreamUnavailableCreditsystem, Operation: o,
		}, err)
	case errors.As(err, &erpErr):
		o, w := name(erpErr.Op)
		code := ""
		if !erpErr.IsErrorAPI() {
			code = strconv.Itoa(erpErr.StatusCode)
		}
		return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
			Message: "The ERP rejected " + w, UpstreamMessage: erpErr.Message, Operation: o, UpstreamCode: code,
		}, err)
	case errors.As(err, &erpTrans) && erp.IsTimeout(err):
		o, w := name(erpTrans.Op)
		if op == "" {
			w = o
		}
		return httpx.WrapError(http.StatusGatewayTimeout, "The ERP did not answer "+w+" within the timeout", err)
	case errors.As(err, &erpTrans):
		o, w := name(erpTrans.Op)
		if op == "" {
			w = o
		}
		return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
			Message: "The ERP could not be reached for " + w, UpstreamMessage: upstreamUnavailableERP, Operation: o,
		}, err)
	}
	return nil
}
