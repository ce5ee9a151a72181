package main

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-playground/validator/v10/non-standard/validators"
	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/credit"
	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/httpx"
)

// Client module (credit-service.md, "Client module"). Decisions where the specification is
// silent:
//
//   - :codigo is the client's codigo_cliente; a client the ERP has not yet given one (every
//     client created through from-creditsystem until its first sync) is addressed by its id,
//     which every answer carries. A codigo_cliente equal to another client's id wins.
//   - GET /clients/:codigo of an unknown codigo is 404 (DESIGN.md). per_page is clamped to
//     1..100, page below 1 means 1, a page past the last one answers no clients (however large);
//     a page or per_page that is not an integer is a 400. The list is newest first.
//   - POST /clients/:codigo/sync-erp takes no body and answers 200
//     {"success": true, "operation": "create"|"update", "operacion": 0|1, "client": {...}}.
//     operacion is 0 (create) for a client the ERP has never accepted and 1 (update) once it has
//     (erp_synced true, or erp_synced false again after a PUT: the ERP already holds the client,
//     so asking it to create it again would fail). An ERP rejection is 502 with the upstream
//     message object (operation "create" or "update") and records nothing; no answer within
//     ERP_TIMEOUT is 504 and records nothing (the ERP may have applied it: POST /clients/exists
//     tells before retrying by hand). A second sync of the same client while one is in flight
//     is 409. A client updated while its sync was in flight gets the ERP's answer stored but
//     stays erp_synced false.
//   - from-creditsystem takes only its listed fields (others, codigo_cliente included, are
//     ignored) and answers 409 EXISTS_IN_ERP even when the client also exists locally (the ERP is
//     the source of truth). A repeat that races the first create answers EXISTS_LOCAL.
//   - PUT: a field sent as null clears it (required fields cannot be cleared); extra_fields are
//     merged key by key (a key sent as null is removed).
//   - String fields are trimmed; an empty optional string is stored as null. Limits must be
//     0..999999999999.99 with at most two decimals, in plain decimal notation. valor_n extra
//     fields are numbers or numeric strings in plain decimal notation (no exponent) of at most 38
//     digits; booleano_n is 0 or 1 (number or string) or a JSON boolean (true = 1, false = 0);
//     both are stored as JSON numbers. lista_datos_n ("list values") is one string or an array
//     of strings, stored as sent.
//   - A body holding \u0000 is a 400 and a compressed body (Content-Encoding) a 415 (httpx).

// Access matrix of the client module.
var (
	clientsBoth       = []auth.Scheme{auth.ServiceKey, auth.Bearer}
	clientsServiceKey = []auth.Scheme{auth.ServiceKey}
	clientsBearer     = []auth.Scheme{auth.Bearer}
)

// sourceERPConsultaExterna is the source of POST /clients/exists.
const sourceERPConsultaExterna = "ERP_CONSULTA_EXTERNA"

func init() {
	// A codigo_empresa or identificacion of spaces only is as missing as an empty one.
	if err := httpx.RegisterValidation("notblank", validators.NotBlank, "is required"); err != nil {
		panic(err)
	}
}

// registerClientRoutes mounts the client module under api (/api/v1/credigestion).
func registerClientRoutes(api fiber.Router, s *server) {
	lease := credit.DefaultSyncLease
	if t := 2 * s.cfg.ERP.Timeout; t > lease {
		lease = t
	}
	clients, err := credit.NewClients(credit.NewClientStore(s.db), s.erp, credit.WithSyncLease(lease))
	if err != nil {
		panic(err) // nil database or ERP client: a wiring mistake
	}
	h := &clientHandlers{clients: clients}
	g := api.Group("/clients")
	g.Post("/exists", auth.Require(s.authn, clientsBoth...), h.exists)
	g.Post("/from-creditsystem", auth.Require(s.authn, clientsServiceKey...), h.fromCreditSystem)
	g.Post("/", auth.Require(s.authn, clientsBoth...), h.create)
	g.Get("/", auth.Require(s.authn, clientsBearer...), h.list)
	g.Get("/:codigo", auth.Require(s.authn, clientsBearer...), h.get)
	g.Put("/:codigo", auth.Require(s.authn, clientsBoth...), h.update)
	g.Post("/:codigo/sync-erp", auth.Require(s.authn, clientsBearer...), h.syncERP)
}

type clientHandlers struct {
	clients *credit.Clients
}

// sourceSystem is CREDITSYSTEM for the ServiceKey and dashboard for a user token.
func sourceSystem(c *fiber.Ctx) string {
	if p := auth.PrincipalFrom(c); p != nil && p.Origin == auth.OriginCreditsystem {
		return credit.SourceCreditSystem
	}
	return credit.SourceDashboard
}

func codigoParam(c *fiber.Ctx) string {
	raw := c.Params("codigo")
	if v, err := url.PathUnescape(raw); err == nil {
		return v
	}
	return raw
}

type existsRequest struct {
	CodigoEmpresa  string `json:"codigo_empresa" validate:"required,notblank,max=20"`
	Identificacion string `json:"identificacion" validate:"required,notblank,max=50"`
}

type criteria struct {
	CodigoEmpresa  string `json:"codigo_empresa"`
	Identificacion string `json:"identificacion"`
}

// POST /clients/exists
func (h *clientHandlers) exists(c *fiber.Ctx) error {
	var req existsRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	req.CodigoEmpresa, req.Identificacion = strings.TrimSpace(req.CodigoEmpresa), strings.TrimSpace(req.Identificacion)
	look, err := h.clients.Lookup(c.UserContext(), erp.LookupQuery{CodigoEmpresa: req.CodigoEmpresa, Identificacion: req.Identificacion})
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{
		"success":      true,
		"exists":       look.Found,
		"source":       sourceERPConsultaExterna,
		"criteria":     criteria(req),
		"client":       look.ERPClient,
		"local_record": look.Local.LocalRecord(),
	})
}

// POST /clients
func (h *clientHandlers) create(c *fiber.Ctx) error {
	var f credit.ClientFields
	if err := httpx.Bind(c, &f); err != nil {
		return err
	}
	client, err := h.clients.Create(c.UserContext(), sourceSystem(c), f)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(fiber.Map{"success": true, "operation": "create", "client": client})
}

// creditSystemClient is the client object of the from-creditsystem 201.
type creditSystemClient struct {
	ID             string  `json:"id"`
	CodigoCliente  *string `json:"codigo_cliente"`
	CodigoEmpresa  string  `json:"codigo_empresa"`
	NombreCliente  string  `json:"nombre_cliente"`
	Identificacion string  `json:"identificacion"`
	Telefono1      *string `json:"telefono_1"`
	ERPSynced      bool    `json:"erp_synced"`
	SourceSystem   string  `json:"source_system"`
	CreatedAt      string  `json:"created_at"`
	UpdatedAt      string  `json:"updated_at"`
}

// existsAnswer is the 409 of from-creditsystem (EXISTS_IN_ERP and EXISTS_LOCAL).
type existsAnswer struct {
	Success     bool                `json:"success"`
	Reason      string              `json:"reason"`
	ERPClient   *erp.ClientRecord   `json:"erp_client"`
	LocalRecord *credit.LocalRecord `json:"local_record"`
	ERPPreCheck credit.PreCheck     `json:"erp_pre_check"`
	Message     string              `json:"message"`
	Hint        string              `json:"hint"`
}

// POST /clients/from-creditsystem
func (h *clientHandlers) fromCreditSystem(c *fiber.Ctx) error {
	var f credit.ClientFields
	if err := httpx.Bind(c, &f); err != nil {
		return err
	}
	client, pre, err := h.clients.CreateFromCreditSystem(c.UserContext(), f)
	var exists *credit.ClientExistsError
	if errors.As(err, &exists) {
		return c.Status(http.StatusConflict).JSON(existsBody(exists))
	}
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(fiber.Map{
		"success":   true,
		"reason":    credit.ReasonCreated,
		"operation": "create",
		"client": creditSystemClient{
			ID:             strconv.FormatInt(client.ID, 10),
			CodigoCliente:  client.CodigoCliente,
			CodigoEmpresa:  client.CodigoEmpresa,
			NombreCliente:  client.NombreCliente,
			Identificacion: client.Identificacion,
			Telefono1:      client.Telefono1,
			ERPSynced:      client.ERPSynced,
			SourceSystem:   client.SourceSystem,
			CreatedAt:      credit.FormatTime(client.CreatedAt),
			UpdatedAt:      credit.FormatTime(client.UpdatedAt),
		},
		"erp_pre_check": pre,
	})
}

func existsBody(e *credit.ClientExistsError) existsAnswer {
	a := existsAnswer{
		Reason:      e.Reason,
		LocalRecord: e.Local.LocalRecord(),
		ERPPreCheck: e.PreCheck,
	}
	if e.Reason == credit.ReasonExistsInERP {
		a.ERPClient = e.ERPClient
		a.Message = fmt.Sprintf("The client already exists in the ERP with codigo_cliente %s", e.ERPClient.CodigoCliente)
		a.Hint = "Do not create it again: use the existing ERP client (POST /clients/exists shows it)."
		return a
	}
	a.Message = "The client already exists in the local registry"
	if e.Local != nil && !e.Local.ERPSynced {
		a.Message += " and is pending synchronization to the ERP"
	}
	a.Hint = "Nothing was created. Update it with PUT /clients/:codigo or send it to the ERP with POST /clients/:codigo/sync-erp."
	return a
}

// PUT /clients/:codigo
func (h *clientHandlers) update(c *fiber.Ctx) error {
	var f credit.ClientFields
	if err := httpx.Bind(c, &f); err != nil {
		return err
	}
	client, err := h.clients.Update(c.UserContext(), codigoParam(c), sourceSystem(c), f)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"success": true, "operation": "update", "client": client})
}

// GET /clients
func (h *clientHandlers) list(c *fiber.Ctx) error {
	q := credit.ClientQuery{Page: 1, PerPage: credit.DefaultClientsPerPage, Search: c.Query("search")}
	var problems []string
	for _, p := range []struct {
		name string
		dst  *int
	}{{"page", &q.Page}, {"per_page", &q.PerPage}} {
		raw := strings.TrimSpace(c.Query(p.name))
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if errors.Is(err, strconv.ErrRange) {
			// An integer too large for int is still an integer: clamp it like any other
			// (a page past the end is empty, per_page becomes 100, negatives become 1).
			n, err = math.MaxInt, nil
			if strings.HasPrefix(raw, "-") {
				n = math.MinInt
			}
		}
		if err != nil {
			problems = append(problems, p.name+" must be an integer")
			continue
		}
		// Clamp here: the store reads 0 as "default", while per_page=0 asks for the minimum.
		*p.dst = max(n, 1)
	}
	if len(problems) > 0 {
		return httpx.ValidationError(problems...)
	}
	page, err := h.clients.List(c.UserContext(), q)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{
		"clients": page.Clients,
		"pagination": fiber.Map{
			"total_count":  page.TotalCount,
			"total_pages":  page.TotalPages,
			"current_page": page.CurrentPage,
			"per_page":     page.PerPage,
		},
	})
}

// GET /clients/:codigo
func (h *clientHandlers) get(c *fiber.Ctx) error {
	client, err := h.clients.Get(c.UserContext(), codigoParam(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"client": client})
}

// POST /clients/:codigo/sync-erp
func (h *clientHandlers) syncERP(c *fiber.Ctx) error {
	res, err := h.clients.SyncERP(c.UserContext(), codigoParam(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{
		"success":   true,
		"operation": res.Operation.String(),
		"operacion": int(res.Operation),
		"client":    res.Client,
	})
}

// clientErrorAnswer maps the client registry's errors (called by mapDomainError).
func clientErrorAnswer(err error) *httpx.Error {
	var (
		invalid  *credit.ClientValidationError
		notFound *credit.ClientNotFoundError
		syncErr  *credit.ClientSyncError
	)
	switch {
	case errors.As(err, &invalid):
		return httpx.ValidationError(invalid.Problems...)
	case errors.As(err, &notFound):
		return httpx.WrapError(http.StatusNotFound, "No local client with codigo_cliente "+notFound.Codigo, err)
	case errors.Is(err, credit.ErrClientNotFound):
		return httpx.WrapError(http.StatusNotFound, "Client not found", err)
	case errors.Is(err, credit.ErrClientExists):
		return httpx.WrapError(http.StatusConflict, "A client with this identificacion and codigo_empresa already exists", err)
	case errors.Is(err, credit.ErrCodigoClienteTaken):
		return httpx.WrapError(http.StatusConflict, "codigo_cliente already belongs to another client", err)
	case errors.Is(err, credit.ErrClientSyncInProgress):
		return httpx.WrapError(http.StatusConflict, "An ERP synchronization of this client is already in progress", err)
	case errors.As(err, &syncErr):
		return erpSyncAnswer(syncErr)
	}
	return nil
}

// erpSyncAnswer names the client operation (create/update) rather than the SDK's SyncClient.
func erpSyncAnswer(e *credit.ClientSyncError) *httpx.Error {
	op := e.Operation.String()
	var apiErr *erp.Error
	switch {
	case errors.As(e, &apiErr):
		code := ""
		if !apiErr.IsErrorAPI() {
			code = strconv.Itoa(apiErr.HTTPStatus)
		}
		return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
			Message:         "The ERP rejected the client " + op,
			UpstreamMessage: apiErr.Message,
			Operation:       op,
			UpstreamCode:    code,
		}, e)
	case erp.IsTimeout(e):
		return httpx.WrapError(http.StatusGatewayTimeout, "The ERP did not answer the client "+op+" within the timeout", e)
	}
	return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
		Message:         "The ERP could not be reached for the client " + op,
		UpstreamMessage: upstreamUnavailableERP,
		Operation:       op,
	}, e)
}
