package main

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/platform/integrations/credit"
	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/internal/httpx"
)

// upstreamMessage of a 502 for a transport failure: generic, as the top-up service's "carrier
// unavailable", never the transport error (it may name the upstream's host or URL).
const (
	upstreamUnavailableCreditsystem = "creditsystem unavailable"
	upstreamUnavailableERP          = "ERP unavailable"
)

// mapError is the credit service's one function from domain and SDK errors to HTTP answers
// (DESIGN.md, Errors and Decisions). Domain cases come first; then the SDK kinds:
//
//   - creditsystem customer without card (nNumeroError 2): 404;
//   - creditsystem business rejection (lError = true) and SOAP fault: 502 with
//     {message, upstreamMessage, operation, upstreamCode} (translation rule 4's 422 is overridden;
//     422 is for local business validation);
//   - ERP rejection (error_api = true or an HTTP error status): 502, same shape;
//   - upstream timeout: 504 naming the operation; never retried by the service;
//   - other transport failures (refused, dropped, undecodable): 502 naming the operation, with
//     the generic upstreamMessage "creditsystem unavailable" / "ERP unavailable" (the detail,
//     which may name hosts, stays in the log), so every 502 carries a non-empty upstreamMessage.
//
// It returns nil for an error it does not know, which httpx answers 500 without internals.
func mapError(err error) *httpx.Error {
	if e := mapDomainError(err); e != nil {
		return e
	}
	var (
		csErr    *creditsystem.Error
		csFault  *creditsystem.FaultError
		csTrans  *creditsystem.TransportError
		erpErr   *erp.Error
		erpTrans *erp.TransportError
	)
	switch {
	case errors.Is(err, creditsystem.ErrCardNotFound):
		return httpx.WrapError(http.StatusNotFound, "Customer without card", err)
	case errors.As(err, &csErr):
		return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
			Message:         "The creditsystem rejected the operation " + csErr.Op,
			UpstreamMessage: csErr.Message,
			Operation:       csErr.Op,
			UpstreamCode:    strconv.Itoa(csErr.Code),
		}, err)
	case errors.As(err, &csFault):
		return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
			Message:         "The creditsystem answered the operation " + csFault.Op + " with a SOAP fault",
			UpstreamMessage: csFault.String,
			Operation:       csFault.Op,
			UpstreamCode:    csFault.Code,
		}, err)
	case errors.As(err, &csTrans) && creditsystem.IsTimeout(err):
		return httpx.WrapError(http.StatusGatewayTimeout,
			"The creditsystem did not answer "+csTrans.Op+" within the timeout", err)
	case errors.As(err, &csTrans):
		return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
			Message:         "The creditsystem could not be reached for " + csTrans.Op,
			UpstreamMessage: upstreamUnavailableCreditsystem,
			Operation:       csTrans.Op,
		}, err)
	case errors.As(err, &erpErr):
		code := ""
		if !erpErr.IsErrorAPI() {
			code = strconv.Itoa(erpErr.HTTPStatus)
		}
		return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
			Message:         "The ERP rejected the operation " + erpErr.Op,
			UpstreamMessage: erpErr.Message,
			Operation:       erpErr.Op,
			UpstreamCode:    code,
		}, err)
	case errors.As(err, &erpTrans) && erp.IsTimeout(err):
		return httpx.WrapError(http.StatusGatewayTimeout, "The ERP did not answer "+erpTrans.Op+" within the timeout", err)
	case errors.As(err, &erpTrans):
		return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
			Message:         "The ERP could not be reached for " + erpTrans.Op,
			UpstreamMessage: upstreamUnavailableERP,
			Operation:       erpTrans.Op,
		}, err)
	}
	return nil
}

// mapDomainError maps the credit package's errors (client registry, consumption module).
func mapDomainError(err error) *httpx.Error {
	if e := clientErrorAnswer(err); e != nil {
		return e
	}
	switch {
	case errors.Is(err, credit.ErrAutorizacionNotFound):
		return httpx.WrapError(http.StatusNotFound, err.Error(), err)
	case errors.Is(err, credit.ErrInvalidState):
		return httpx.WrapError(http.StatusBadRequest, err.Error(), err)
	case errors.Is(err, credit.ErrInFlight), errors.Is(err, credit.ErrOutcomeUnknown):
		return httpx.WrapError(http.StatusConflict, err.Error(), err)
	}
	return nil
}
