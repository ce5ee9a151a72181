package main

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/credit/clients"
	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/httpx"
)

// sourceERPConsultaExterna is the source of POST /clients/exists.
const sourceERPConsultaExterna = "ERP_CONSULTA_EXTERNA"

// clientHandlers serve the client module (credit-service.md, "Client module").
type clientHandlers struct {
	svc *clients.Service
}

// sourceSystem is CREDITSYSTEM for the ServiceKey and dashboard for a user token.
func sourceSystem(c *fiber.Ctx) string {
	if p := auth.PrincipalFrom(c); p != nil && p.Origin == auth.OriginCreditsystem {
		return clients.SourceCreditSystem
	}
	return clients.SourceDashboard
}

func codigoParam(c *fiber.Ctx) string {
	raw := c.Params("codigo")
	if v, err := url.PathUnescape(raw); err == nil {
		return v
	}
	return raw
}

type existsRequest struct {
	CodigoEmpresa  string `json:"codigo_empresa"`
	Identificacion string `json:"identificacion"`
}

// POST /clients/exists
func (h *clientHandlers) exists(c *fiber.Ctx) error {
	var req existsRequest
	problems, err := httpx.Decode(c, &req)
	if err != nil {
		return err
	}
	q := clients.LookupQuery{CodigoEmpresa: req.CodigoEmpresa, Identificacion: req.Identificacion}
	if err := httpx.Invalid(problems, q.Validate()); err != nil {
		return err
	}
	q.CodigoEmpresa, q.Identificacion = strings.TrimSpace(q.CodigoEmpresa), strings.TrimSpace(q.Identificacion)
	look, err := h.svc.Lookup(c.UserContext(), q)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{
		"success":      true,
		"exists":       look.Found,
		"source":       sourceERPConsultaExterna,
		"criteria":     existsRequest{CodigoEmpresa: q.CodigoEmpresa, Identificacion: q.Identificacion},
		"client":       look.ERPClient,
		"local_record": localRecord(look.Local),
	})
}

// POST /clients
func (h *clientHandlers) create(c *fiber.Ctx) error {
	f, err := decodeClientFields(c)
	if err != nil {
		return err
	}
	client, err := h.svc.Create(c.UserContext(), sourceSystem(c), f)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(fiber.Map{"success": true, "operation": "create", "client": toClientJSON(client)})
}

// POST /clients/from-creditsystem
func (h *clientHandlers) fromCreditSystem(c *fiber.Ctx) error {
	f, err := decodeClientFields(c)
	if err != nil {
		return err
	}
	client, pre, err := h.svc.CreateFromCreditSystem(c.UserContext(), f)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(fiber.Map{
		"success":   true,
		"reason":    clients.ReasonCreated,
		"operation": "create",
		"client": creditSystemClientJSON{
			ID:             strconv.FormatInt(client.ID, 10),
			CodigoCliente:  client.CodigoCliente,
			CodigoEmpresa:  client.CodigoEmpresa,
			NombreCliente:  client.NombreCliente,
			Identificacion: client.Identificacion,
			Telefono1:      client.Telefono1,
			ERPSynced:      client.ERPSynced,
			SourceSystem:   client.SourceSystem,
			CreatedAt:      httpx.FormatTime(client.CreatedAt),
			UpdatedAt:      httpx.FormatTime(client.UpdatedAt),
		},
		"erp_pre_check": preCheckAnswer(pre),
	})
}

// PUT /clients/:codigo
func (h *clientHandlers) update(c *fiber.Ctx) error {
	f, err := decodeClientFields(c)
	if err != nil {
		return err
	}
	client, err := h.svc.Update(c.UserContext(), codigoParam(c), sourceSystem(c), f)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"success": true, "operation": "update", "client": toClientJSON(client)})
}

// clientListParams are the query parameters of GET /clients; any other is a 400 naming it.
var clientListParams = []string{"page", "per_page", "search"}

// GET /clients
func (h *clientHandlers) list(c *fiber.Ctx) error {
	q := clients.Query{Page: 1, PerPage: clients.DefaultPerPage, Search: c.Query("search")}
	var problems []string
	if p := httpx.UnknownQuery(c, clientListParams...); p != "" {
		problems = append(problems, p)
	}
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
	page, err := h.svc.List(c.UserContext(), q)
	if err != nil {
		return err
	}
	list := make([]clientJSON, len(page.Clients))
	for i, client := range page.Clients {
		list[i] = toClientJSON(client)
	}
	return c.JSON(fiber.Map{
		"clients": list,
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
	client, err := h.svc.Get(c.UserContext(), codigoParam(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"client": toClientJSON(client)})
}

// POST /clients/:codigo/sync-erp
func (h *clientHandlers) syncERP(c *fiber.Ctx) error {
	res, err := h.svc.SyncERP(c.UserContext(), codigoParam(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{
		"success":   true,
		"operation": res.Operation.String(),
		"operacion": int(res.Operation),
		"client":    toClientJSON(res.Client),
	})
}
