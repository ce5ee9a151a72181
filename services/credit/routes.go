package main

import (
	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/idempotency"
)

// apiPrefix is the prefix of the implemented endpoints (credit-service.md, Versioning).
const apiPrefix = "/api/v1/credigestion"

// pagosPrefix is the payments routes' unversioned prefix (credit-service.md, Versioning).
const pagosPrefix = "/credigestion/pagos"

// routes mounts every module under apiPrefix with the authentication of the specification's
// access matrix: consumption is Bearer only; clients take the ServiceKey, a Bearer JWT or both.
func routes(app *fiber.App, authn *auth.Authenticator, keys *idempotency.Store, ch *clientHandlers, kh *consumoHandlers, ph *pagoHandlers) {
	api := app.Group(apiPrefix)
	bearer := auth.Require(authn, auth.Bearer)
	// Every money-moving POST is safe to retry with an Idempotency-Key (internal/idempotency).
	once := idempotency.Middleware(keys, auth.Caller)
	serviceKey := auth.Require(authn, auth.ServiceKey)
	either := auth.Require(authn, auth.ServiceKey, auth.Bearer)

	c := api.Group("/clients")
	c.Post("/exists", either, ch.exists)
	c.Post("/from-creditsystem", serviceKey, ch.fromCreditSystem)
	c.Post("/", either, ch.create)
	// A route that reads a query refuses a parameter it does not take (400 naming it); the lists
	// check theirs with their other parameters, to answer every problem at once.
	c.Get("/", bearer, ch.list)
	c.Get("/:codigo", bearer, httpx.OnlyQuery(), ch.get)
	c.Put("/:codigo", either, ch.update)
	c.Post("/:codigo/sync-erp", bearer, ch.syncERP)

	k := api.Group("/consumo")
	k.Post("/cupo", bearer, kh.cupo)
	k.Post("/financiacion", bearer, kh.financiacion)
	k.Post("/autorizacion", bearer, once, kh.autorizacion)
	k.Post("/otp", bearer, kh.otp)
	k.Post("/confirmar", bearer, once, kh.confirmar)
	k.Post("/reverso", bearer, once, kh.reverso)
	k.Post("/reverso-consumo", bearer, once, kh.reversoConsumo)
	k.Get("/:autorizacion_id", bearer, httpx.OnlyQuery(), kh.get)

	// Payments: the specification's /credigestion/pagos, also under the versioned prefix.
	for _, prefix := range []string{pagosPrefix, apiPrefix + "/pagos"} {
		p := app.Group(prefix)
		p.Post("/consulta-deuda", bearer, ph.consultaDeuda)
		p.Post("/aplicar", bearer, once, ph.aplicar)
		p.Post("/reverso", bearer, once, ph.reverso)
		p.Get("/", bearer, ph.list)
		p.Get("/:numeroOperacion", bearer, httpx.OnlyQuery(), ph.get)
	}
}
