package main

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/platform/integrations/credit/payments"
	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/httpx"
)

// pagoHandlers serve the payments module (credit-service.md, "Payments module"): camelCase JSON,
// money as JSON numbers with two decimals. The rules are the domain's (package payments).
type pagoHandlers struct {
	svc *payments.Service
}

type deudaRequest struct {
	NumeroTarjeta        string `json:"numeroTarjeta"`
	NumeroIdentificacion string `json:"numeroIdentificacion"`
}

type formaPagoRequest struct {
	Codigo                  string       `json:"codigo"`
	Valor                   *json.Number `json:"valor" validate:"required"`
	InstitucionFinanciera   string       `json:"institucionFinanciera"`
	NumeroDocumento         string       `json:"numeroDocumento"`
	NumeroCuenta            string       `json:"numeroCuenta"`
	IdentCuentaCorrentista  string       `json:"identCuentaCorrentista"`
	NombreCuentaCorrentista string       `json:"nombreCuentaCorrentista"`
}

type aplicarRequest struct {
	NumeroTarjeta string             `json:"numeroTarjeta"`
	ValorPago     *json.Number       `json:"valorPago" validate:"required"`
	FechaPago     string             `json:"fechaPago" validate:"required,max=10,date_ymd"`
	FormasPago    []formaPagoRequest `json:"formasPago" validate:"omitempty,dive"`
}

type reversoPagoRequest struct {
	NumeroOperacion *int64 `json:"numeroOperacion" validate:"required"`
	Motivo          string `json:"motivo"`
}

// number is a JSON number as a decimal; zero when absent (its problem is reported instead).
func number(n *json.Number) decimal.Decimal {
	if n == nil {
		return decimal.Zero
	}
	d, _ := decimal.NewFromString(n.String())
	return d
}

// POST /pagos/consulta-deuda
func (h *pagoHandlers) consultaDeuda(c *fiber.Ctx) error {
	in, err := decode(c, &deudaRequest{}, func(r *deudaRequest) payments.DeudaInput {
		return payments.DeudaInput{NumeroTarjeta: strings.TrimSpace(r.NumeroTarjeta),
			NumeroIdentificacion: strings.TrimSpace(r.NumeroIdentificacion), RequestID: httpx.RequestID(c)}
	})
	if err != nil {
		return err
	}
	d, err := h.svc.ConsultarDeuda(c.UserContext(), in)
	if err != nil {
		return err
	}
	out := deudaJSON{
		Cliente: clienteDeudaJSON{Codigo: d.CodigoCliente, Nombre: d.NombreCliente, NumeroTarjeta: d.NumeroTarjeta},
		Deuda: deudaValoresJSON{
			PagoContado: money(d.PagoContado), PagoMinimo: money(d.PagoMinimo), ValorMora: money(d.ValorMora),
			ValorGestion: money(d.ValorGestion), ValorVencido: money(d.ValorVencido), FechaProximoPago: d.FechaProximoPago,
		},
	}
	for i := range d.Conciliados {
		out.PagosConciliados = append(out.PagosConciliados, h.pagoJSON(&d.Conciliados[i], nil))
	}
	return c.JSON(out)
}

// POST /pagos/aplicar
func (h *pagoHandlers) aplicar(c *fiber.Ctx) error {
	in, err := decode(c, &aplicarRequest{}, func(r *aplicarRequest) payments.PagoInput {
		fecha, _ := creditsystem.ParseDate(r.FechaPago)
		in := payments.PagoInput{NumeroTarjeta: strings.TrimSpace(r.NumeroTarjeta), ValorPago: number(r.ValorPago), FechaPago: fecha,
			SolicitadoPor: auth.PrincipalFrom(c).Subject(), RequestID: httpx.RequestID(c)}
		for _, f := range r.FormasPago {
			in.FormasPago = append(in.FormasPago, payments.FormaPago{
				Codigo: strings.TrimSpace(f.Codigo), Valor: number(f.Valor),
				InstitucionFinanciera: strings.TrimSpace(f.InstitucionFinanciera), NumeroDocumento: strings.TrimSpace(f.NumeroDocumento),
				NumeroCuenta: strings.TrimSpace(f.NumeroCuenta), IdentCuentaCorrentista: strings.TrimSpace(f.IdentCuentaCorrentista),
				NombreCuentaCorrentista: strings.TrimSpace(f.NombreCuentaCorrentista),
			})
		}
		return in
	})
	if err != nil {
		return err
	}
	p, err := h.svc.Aplicar(c.UserContext(), in)
	if err != nil {
		return err
	}
	return c.JSON(h.pagoJSON(p, nil))
}

// POST /pagos/reverso
func (h *pagoHandlers) reverso(c *fiber.Ctx) error {
	in, err := decode(c, &reversoPagoRequest{}, func(r *reversoPagoRequest) payments.ReversoInput {
		in := payments.ReversoInput{Motivo: strings.TrimSpace(r.Motivo), SolicitadoPor: auth.PrincipalFrom(c).Subject(), RequestID: httpx.RequestID(c)}
		if r.NumeroOperacion != nil {
			in.NumeroOperacion = *r.NumeroOperacion
		}
		return in
	})
	if err != nil {
		return err
	}
	p, err := h.svc.Reversar(c.UserContext(), in)
	if err != nil {
		return err
	}
	// The specification's answer names the reversed invoices facturasAfectadas.
	out := h.pagoJSON(p, nil)
	out.FacturasAfectadas = out.FacturasRevertidas
	return c.JSON(out)
}

// GET /pagos/:numeroOperacion
func (h *pagoHandlers) get(c *fiber.Ctx) error {
	n, err := strconv.ParseInt(c.Params("numeroOperacion"), 10, 64)
	if err != nil || n <= 0 {
		return httpx.ValidationError("numeroOperacion must be a positive integer")
	}
	p, entregas, err := h.svc.Pago(c.UserContext(), n)
	if err != nil {
		return err
	}
	return c.JSON(h.pagoJSON(p, entregas))
}

// pagoListParams are the query parameters of GET /pagos (perPage is per_page in the module's
// camelCase); any other is a 400 naming it.
var pagoListParams = []string{"numeroTarjeta", "page", "per_page", "perPage"}

// GET /pagos?numeroTarjeta=...&page=&per_page=
func (h *pagoHandlers) list(c *fiber.Ctx) error {
	q := payments.ListQuery{NumeroTarjeta: strings.TrimSpace(c.Query("numeroTarjeta"))}
	var problems []string
	if p := httpx.UnknownQuery(c, pagoListParams...); p != "" {
		problems = append(problems, p)
	}
	for _, p := range []struct {
		names []string
		dst   *int
	}{{[]string{"page"}, &q.Page}, {[]string{"per_page", "perPage"}, &q.PerPage}} {
		for _, name := range p.names {
			raw := strings.TrimSpace(c.Query(name))
			if raw == "" {
				continue
			}
			n, err := strconv.Atoi(raw)
			if errors.Is(err, strconv.ErrRange) {
				n, err = int(^uint(0)>>1), nil
				if strings.HasPrefix(raw, "-") {
					n = 1
				}
			}
			if err != nil {
				problems = append(problems, name+" must be an integer")
				continue
			}
			*p.dst = max(n, 1)
		}
	}
	if len(q.NumeroTarjeta) > 20 {
		problems = append(problems, "numeroTarjeta must be at most 20 characters long")
	}
	if len(problems) > 0 {
		return httpx.ValidationError(problems...)
	}
	page, err := h.svc.Pagos(c.UserContext(), q)
	if err != nil {
		return err
	}
	list := make([]pagoJSON, len(page.Pagos))
	for i := range page.Pagos {
		list[i] = h.pagoJSON(&page.Pagos[i], page.Entregas[page.Pagos[i].ID])
	}
	return c.JSON(fiber.Map{
		"pagos": list,
		"pagination": fiber.Map{
			"total_count":  page.TotalCount,
			"total_pages":  page.TotalPages,
			"current_page": page.CurrentPage,
			"per_page":     page.PerPage,
		},
	})
}

// Answers.

type clienteDeudaJSON struct {
	Codigo        *int64  `json:"codigo"`
	Nombre        *string `json:"nombre"`
	NumeroTarjeta *string `json:"numeroTarjeta"`
}

type deudaValoresJSON struct {
	PagoContado      json.RawMessage    `json:"pagoContado"`
	PagoMinimo       json.RawMessage    `json:"pagoMinimo"`
	ValorMora        json.RawMessage    `json:"valorMora"`
	ValorGestion     json.RawMessage    `json:"valorGestion"`
	ValorVencido     json.RawMessage    `json:"valorVencido"`
	FechaProximoPago *creditsystem.Date `json:"fechaProximoPago"`
}

// deudaJSON is the answer of /pagos/consulta-deuda; pagosConciliados (decided here) lists the
// payments and reversals of the card whose unknown outcome this query settled.
type deudaJSON struct {
	Cliente          clienteDeudaJSON `json:"cliente"`
	Deuda            deudaValoresJSON `json:"deuda"`
	PagosConciliados []pagoJSON       `json:"pagosConciliados,omitempty"`
}

type facturaJSON struct {
	NumeroFactura string          `json:"numeroFactura"`
	Valor         json.RawMessage `json:"valor"`
}

type rubroJSON struct {
	Codigo        string          `json:"codigo"`
	TipoDocumento string          `json:"tipoDocumento"`
	Valor         json.RawMessage `json:"valor"`
}

type cupoPagoJSON struct {
	Codigo      string          `json:"codigo"`
	Descripcion string          `json:"descripcion"`
	Asignado    json.RawMessage `json:"asignado"`
	Disponible  json.RawMessage `json:"disponible"`
	Utilizado   json.RawMessage `json:"utilizado"`
}

type formaPagoJSON struct {
	Codigo                  string          `json:"codigo"`
	Valor                   json.RawMessage `json:"valor"`
	InstitucionFinanciera   *string         `json:"institucionFinanciera"`
	NumeroDocumento         *string         `json:"numeroDocumento"`
	NumeroCuenta            *string         `json:"numeroCuenta"`
	IdentCuentaCorrentista  *string         `json:"identCuentaCorrentista"`
	NombreCuentaCorrentista *string         `json:"nombreCuentaCorrentista"`
}

type entregaJSON struct {
	Evento          string  `json:"evento"`
	Estado          string  `json:"estado"`
	Intentos        int     `json:"intentos"`
	UltimoError     *string `json:"ultimoError"`
	NumeroDocumento *string `json:"numeroDocumento"`
	EntregadoAt     *string `json:"entregadoAt"`
}

type conciliacionJSON struct {
	Operacion          string          `json:"operacion"`
	Aplicada           bool            `json:"aplicada"`
	PagoContadoAntes   json.RawMessage `json:"pagoContadoAntes"`
	PagoContadoDespues json.RawMessage `json:"pagoContadoDespues"`
	ConsultaIniciadaAt string          `json:"consultaIniciadaAt"`
}

// pagoJSON is a payment of the ledger: the specification's answer of /pagos/aplicar
// (numeroOperacion, facturasAfectadas, rubrosAplicados, cupos) and of /pagos/reverso (estado,
// facturasAfectadas = the reversed invoices, rubrosRevertidos), plus the ledger's members.
type pagoJSON struct {
	ID                   int64             `json:"id"`
	NumeroOperacion      *int64            `json:"numeroOperacion"`
	Estado               string            `json:"estado"`
	NumeroTarjeta        string            `json:"numeroTarjeta"`
	ValorPago            json.RawMessage   `json:"valorPago"`
	FechaPago            string            `json:"fechaPago"`
	FormasPago           []formaPagoJSON   `json:"formasPago"`
	FacturasAfectadas    []facturaJSON     `json:"facturasAfectadas"`
	RubrosAplicados      []rubroJSON       `json:"rubrosAplicados"`
	Cupos                []cupoPagoJSON    `json:"cupos"`
	RubrosRevertidos     []rubroJSON       `json:"rubrosRevertidos,omitempty"`
	FacturasRevertidas   []facturaJSON     `json:"facturasRevertidas,omitempty"`
	MotivoReverso        *string           `json:"motivoReverso,omitempty"`
	OperacionEnCurso     *string           `json:"operacionEnCurso"`
	ResultadoDesconocido bool              `json:"resultadoDesconocido"`
	Conciliacion         *conciliacionJSON `json:"conciliacion,omitempty"`
	MensajeUpstream      *string           `json:"mensajeUpstream,omitempty"`
	SolicitadoPor        *string           `json:"solicitadoPor"`
	CreatedAt            string            `json:"createdAt"`
	AplicadoAt           *string           `json:"aplicadoAt"`
	ReversadoAt          *string           `json:"reversadoAt"`
	EntregasERP          []entregaJSON     `json:"entregasErp,omitempty"`
}

func (h *pagoHandlers) pagoJSON(p *payments.Pago, entregas []payments.Entrega) pagoJSON {
	out := pagoJSON{
		ID: p.ID, NumeroOperacion: p.NumeroOperacion, Estado: string(p.Estado), NumeroTarjeta: p.NumeroTarjeta,
		ValorPago: jsonDecimal(decimal.NewNullDecimal(p.ValorPago)), FechaPago: p.FechaPago,
		FormasPago: []formaPagoJSON{}, FacturasAfectadas: facturasJSON(p.FacturasAfectadas),
		RubrosAplicados: rubrosJSON(p.RubrosAplicados), Cupos: []cupoPagoJSON{},
		OperacionEnCurso: text(p.OperacionEnCurso), ResultadoDesconocido: h.svc.Desconocido(p),
		MotivoReverso: text(p.MotivoReverso), SolicitadoPor: text(p.SolicitadoPor),
		CreatedAt: httpx.FormatTime(p.CreatedAt), AplicadoAt: textTime(p.AplicadoAt), ReversadoAt: textTime(p.ReversadoAt),
	}
	if p.Estado == payments.EstadoRechazado || p.Estado == payments.EstadoDesconocido {
		out.MensajeUpstream = text(p.MensajeUpstream)
	}
	for _, f := range p.FormasPago {
		out.FormasPago = append(out.FormasPago, formaPagoJSON{
			Codigo: f.Codigo, Valor: jsonDecimal(decimal.NewNullDecimal(f.Valor)),
			InstitucionFinanciera: text(f.InstitucionFinanciera), NumeroDocumento: text(f.NumeroDocumento),
			NumeroCuenta: text(f.NumeroCuenta), IdentCuentaCorrentista: text(f.IdentCuentaCorrentista),
			NombreCuentaCorrentista: text(f.NombreCuentaCorrentista),
		})
	}
	for _, c := range p.Cupos {
		out.Cupos = append(out.Cupos, cupoPagoJSON{Codigo: c.Codigo, Descripcion: c.Descripcion,
			Asignado: jsonDecimal(c.Asignado), Disponible: jsonDecimal(c.Disponible), Utilizado: jsonDecimal(c.Utilizado)})
	}
	if p.Estado == payments.EstadoReversado {
		// /pagos/reverso answers the reversed invoices as facturasAfectadas.
		out.FacturasRevertidas = facturasJSON(p.FacturasRevertidas)
		out.RubrosRevertidos = rubrosJSON(p.RubrosRevertidos)
	}
	if ev := p.Conciliacion; ev != nil {
		out.Conciliacion = &conciliacionJSON{Operacion: ev.Operacion, Aplicada: ev.Aplicada,
			PagoContadoAntes:   jsonDecimal(decimal.NewNullDecimal(ev.PagoContadoAntes)),
			PagoContadoDespues: jsonDecimal(decimal.NewNullDecimal(ev.PagoContadoDespues)),
			ConsultaIniciadaAt: httpx.FormatTime(ev.ConsultaIniciadaAt)}
	}
	for _, e := range entregas {
		out.EntregasERP = append(out.EntregasERP, entregaJSON{Evento: e.Evento, Estado: e.Estado, Intentos: e.Intentos,
			UltimoError: text(e.UltimoError), NumeroDocumento: text(e.NumeroDocumento), EntregadoAt: textTime(e.EntregadoAt)})
	}
	return out
}

func facturasJSON(in []payments.Factura) []facturaJSON {
	out := make([]facturaJSON, 0, len(in))
	for _, f := range in {
		out = append(out, facturaJSON{NumeroFactura: f.NumeroFactura, Valor: jsonDecimal(decimal.NewNullDecimal(f.Valor))})
	}
	return out
}

func rubrosJSON(in []payments.Rubro) []rubroJSON {
	out := make([]rubroJSON, 0, len(in))
	for _, r := range in {
		out = append(out, rubroJSON{Codigo: r.Codigo, TipoDocumento: r.TipoDocumento, Valor: jsonDecimal(decimal.NewNullDecimal(r.Valor))})
	}
	return out
}
