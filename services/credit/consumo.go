package main

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/platform/integrations/credit/consumption"
	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/internal/httpx"
)

// consumoHandlers serve the consumption module (credit-service.md, "Consumption module"). A
// request struct carries the wire shape: JSON types, required members and the syntax of
// numeric strings and dates; every rule of the values is the domain's (consumption's inputs).
type consumoHandlers struct {
	svc *consumption.Service
}

// ctx carries the request id to the audit of upstream attempts.
func consumoCtx(c *fiber.Ctx) context.Context {
	return consumption.WithRequestID(c.UserContext(), httpx.RequestID(c))
}

type articuloRequest struct {
	CodigoArticulo     string `json:"codigo_articulo"`
	TextoArticulo      string `json:"texto_articulo"`
	Cantidad           *int   `json:"cantidad" validate:"required"`
	Precio             string `json:"precio" validate:"required,numeric_string"`
	CodigoTipoArticulo string `json:"codigo_tipo_articulo"`
	Caracteristicas    string `json:"caracteristicas"`
}

func articulos(items []articuloRequest) []consumption.Articulo {
	if len(items) == 0 {
		return nil
	}
	out := make([]consumption.Articulo, len(items))
	for i, it := range items {
		out[i] = consumption.Articulo{
			CodigoArticulo: optional(it.CodigoArticulo), TextoArticulo: it.TextoArticulo, Cantidad: deref(it.Cantidad),
			Precio: amount(it.Precio), CodigoTipoArticulo: optional(it.CodigoTipoArticulo), Caracteristicas: optional(it.Caracteristicas),
		}
	}
	return out
}

// optional is an optional text field as the creditsystem client takes it: "" (left out of the
// SOAP request) when it was not given, sent empty or blank.
func optional(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return s
}

func deref(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}

// amount is a numeric string as a decimal; zero when it is not one (its decoding problem is
// reported instead).
func amount(s string) decimal.Decimal {
	d, _ := decimal.NewFromString(s)
	return d
}

func optionalAmount(s string) *decimal.Decimal {
	if s == "" {
		return nil
	}
	d := amount(s)
	return &d
}

type cupoRequest struct {
	CodigoEmpresa  string `json:"codigo_empresa"`
	Identificacion string `json:"identificacion"`
	NumeroTarjeta  string `json:"numero_tarjeta"`
}

type financiacionRequest struct {
	CodigoEmpresa       string            `json:"codigo_empresa"`
	NumeroTarjeta       string            `json:"numero_tarjeta"`
	CodigoProducto      string            `json:"codigo_producto"`
	CodigoTipoCupo      string            `json:"codigo_tipo_cupo"`
	CodigoTipoOperacion string            `json:"codigo_tipo_operacion"`
	Monto               string            `json:"monto" validate:"required,numeric_string"`
	Items               []articuloRequest `json:"items" validate:"omitempty,dive"`
}

type autorizacionRequest struct {
	CodigoEmpresa       string            `json:"codigo_empresa"`
	Identificacion      string            `json:"identificacion"`
	NumeroTarjeta       string            `json:"numero_tarjeta"`
	CodigoProducto      string            `json:"codigo_producto"`
	Plazo               *int              `json:"plazo" validate:"required"`
	Monto               string            `json:"monto" validate:"required,numeric_string"`
	PuntoVenta          string            `json:"punto_venta"`
	CodigoTipoCupo      string            `json:"codigo_tipo_cupo"`
	CodigoTipoOperacion string            `json:"codigo_tipo_operacion"`
	CuotaInicial        string            `json:"cuota_inicial" validate:"omitempty,numeric_string"`
	GarantiaExtendida   bool              `json:"garantia_extendida"`
	Items               []articuloRequest `json:"items" validate:"omitempty,dive"`
	OTP                 string            `json:"otp"`
}

type otpRequest struct {
	AutorizacionID string `json:"autorizacion_id"`
	OTP            string `json:"otp"`
}

type confirmarRequest struct {
	AutorizacionID string `json:"autorizacion_id"`
	NumeroFactura  string `json:"numero_factura"`
	MontoFacturado string `json:"monto_facturado" validate:"required,numeric_string"`
	FechaFactura   string `json:"fecha_factura" validate:"required,max=10,date_ymd"`
	ValorIVA       string `json:"valor_iva" validate:"omitempty,numeric_string"`
	ValorComision  string `json:"valor_comision" validate:"omitempty,numeric_string"`
}

type reversoRequest struct {
	AutorizacionID string `json:"autorizacion_id"`
	NumeroTarjeta  string `json:"numero_tarjeta"`
	Identificacion string `json:"identificacion"`
}

type reversoConsumoRequest struct {
	AutorizacionID string `json:"autorizacion_id"`
	NumeroTarjeta  string `json:"numero_tarjeta"`
}

// decode reads the body into req and builds the domain input with input; a 400 lists the
// decoding problems and the domain's problems of the members that decoded.
func decode[R any, I interface{ Validate() error }](c *fiber.Ctx, req *R, input func(*R) I) (I, error) {
	problems, err := httpx.Decode(c, req)
	if err != nil {
		var zero I
		return zero, err
	}
	in := input(req)
	return in, httpx.Invalid(problems, in.Validate())
}

// Answers.

// money is an upstream amount as a JSON number with two decimals, or null.
func money(d *decimal.Decimal) json.RawMessage {
	if d == nil {
		return jsonDecimal(decimal.NullDecimal{})
	}
	return jsonDecimal(decimal.NewNullDecimal(*d))
}

// numeroOperacion is the stored operation number as a JSON number, or null.
func numeroOperacion(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage("null")
	}
	return json.RawMessage(s)
}

type tipoOperacionJSON struct {
	CodigoTipoOperacion      *string         `json:"cCodigoTipoOperacion"`
	DescripcionTipoOperacion *string         `json:"cDescripcionTipoOperacion"`
	CupoDisponibleOpe        json.RawMessage `json:"nCupoDisponibleOpe"`
}

// tipoCupoJSON is a credit line with its operation types (an entry of cupos).
type tipoCupoJSON struct {
	tipoCupoFlatJSON
	Operaciones []tipoOperacionJSON `json:"operaciones"`
}

// cupoJSON is the answer of /consumo/cupo: the flat fields of the specification, taken from
// the first credit line and its first operation type (null when there is none), followed by
// every credit line with its operation types in cupos.
type cupoJSON struct {
	Cliente           *string            `json:"cliente"`
	NumeroTarjeta     *string            `json:"numero_tarjeta"`
	FechaActivacion   *creditsystem.Date `json:"fecha_activacion"`
	FechaUltimaCompra *creditsystem.Date `json:"fecha_ultima_compra"`
	FechaUltimoPago   *creditsystem.Date `json:"fecha_ultimo_pago"`
	tipoCupoFlatJSON
	tipoOperacionJSON
	Cupos []tipoCupoJSON `json:"cupos"`
}

// tipoCupoFlatJSON is a credit line without its operation types (the flat fields of cupoJSON).
type tipoCupoFlatJSON struct {
	CodigoTipoCupo      *string         `json:"cCodigoTipoCupo"`
	DescripcionTipoCupo *string         `json:"cDescripcionTipoCupo"`
	CupoDisponible      json.RawMessage `json:"nCupoDisponible"`
	CupoAsignado        json.RawMessage `json:"nCupoAsignado"`
	CupoUtilizado       json.RawMessage `json:"nCupoUtilizado"`
}

// null is the JSON null of an absent amount.
var null = json.RawMessage("null")

// POST /consumo/cupo
func (h *consumoHandlers) cupo(c *fiber.Ctx) error {
	in, err := decode(c, &cupoRequest{}, func(r *cupoRequest) consumption.CupoInput { return consumption.CupoInput(*r) })
	if err != nil {
		return err
	}
	res, err := h.svc.Cupo(consumoCtx(c), in)
	if err != nil {
		return err
	}
	out := cupoJSON{
		Cliente: res.Cliente, NumeroTarjeta: res.NumeroTarjeta, FechaActivacion: res.FechaActivacion,
		FechaUltimaCompra: res.FechaUltimaCompra, FechaUltimoPago: res.FechaUltimoPago,
	}
	for _, cu := range res.Cupos {
		t := tipoCupoJSON{tipoCupoFlatJSON: tipoCupoFlatJSON{
			CodigoTipoCupo: cu.CodigoTipoCupo, DescripcionTipoCupo: cu.DescripcionTipoCupo,
			CupoDisponible: money(cu.CupoDisponible), CupoAsignado: money(cu.CupoAsignado), CupoUtilizado: money(cu.CupoUtilizado),
		}}
		for _, op := range cu.Operaciones {
			t.Operaciones = append(t.Operaciones, tipoOperacionJSON{
				CodigoTipoOperacion: op.CodigoTipoOperacion, DescripcionTipoOperacion: op.DescripcionTipoOperacion,
				CupoDisponibleOpe: money(op.CupoDisponibleOpe),
			})
		}
		out.Cupos = append(out.Cupos, t)
	}
	out.tipoCupoFlatJSON = tipoCupoFlatJSON{CupoDisponible: null, CupoAsignado: null, CupoUtilizado: null}
	out.tipoOperacionJSON = tipoOperacionJSON{CupoDisponibleOpe: null}
	if len(out.Cupos) > 0 {
		first := out.Cupos[0]
		out.tipoCupoFlatJSON = first.tipoCupoFlatJSON
		if len(first.Operaciones) > 0 {
			out.tipoOperacionJSON = first.Operaciones[0]
		}
	}
	return c.JSON(out)
}

type alternativaJSON struct {
	Plazo                  *int            `json:"plazo"`
	CuotaMensual           json.RawMessage `json:"cuota_mensual"`
	InteresTotal           json.RawMessage `json:"interes_total"`
	DeudaTotal             json.RawMessage `json:"deuda_total"`
	CuotaGarantiaExtendida json.RawMessage `json:"cuota_garantia_extendida"`
	CuotaEntradaMinima     json.RawMessage `json:"cuota_entrada_minima"`
}

// POST /consumo/financiacion
func (h *consumoHandlers) financiacion(c *fiber.Ctx) error {
	in, err := decode(c, &financiacionRequest{}, func(r *financiacionRequest) consumption.FinanciacionInput {
		return consumption.FinanciacionInput{
			CodigoEmpresa: r.CodigoEmpresa, NumeroTarjeta: r.NumeroTarjeta, CodigoProducto: r.CodigoProducto, CodigoTipoCupo: r.CodigoTipoCupo,
			CodigoTipoOperacion: optional(r.CodigoTipoOperacion), Monto: amount(r.Monto), Items: articulos(r.Items),
		}
	})
	if err != nil {
		return err
	}
	res, err := h.svc.Financiacion(consumoCtx(c), in)
	if err != nil {
		return err
	}
	var alts []alternativaJSON
	for _, a := range res.Alternativas {
		alts = append(alts, alternativaJSON{
			Plazo: a.Plazo, CuotaMensual: money(a.CuotaMensual), InteresTotal: money(a.InteresTotal), DeudaTotal: money(a.DeudaTotal),
			CuotaGarantiaExtendida: money(a.CuotaGarantiaExtendida), CuotaEntradaMinima: money(a.CuotaEntradaMinima),
		})
	}
	return c.JSON(fiber.Map{"alternativas": alts})
}

// POST /consumo/autorizacion
func (h *consumoHandlers) autorizacion(c *fiber.Ctx) error {
	in, err := decode(c, &autorizacionRequest{}, func(r *autorizacionRequest) consumption.AutorizacionInput {
		return consumption.AutorizacionInput{
			CodigoEmpresa: r.CodigoEmpresa, Identificacion: r.Identificacion, NumeroTarjeta: r.NumeroTarjeta, CodigoProducto: r.CodigoProducto,
			Plazo: deref(r.Plazo), Monto: amount(r.Monto), PuntoVenta: r.PuntoVenta,
			CodigoTipoCupo: r.CodigoTipoCupo, CodigoTipoOperacion: r.CodigoTipoOperacion, CuotaInicial: optionalAmount(r.CuotaInicial),
			GarantiaExtendida: r.GarantiaExtendida, Items: articulos(r.Items), OTP: r.OTP,
		}
	})
	if err != nil {
		return err
	}
	rec, res, err := h.svc.Autorizar(consumoCtx(c), in)
	if err != nil {
		return err
	}
	var qr *string
	if rec.ImagenQR != "" {
		qr = &rec.ImagenQR
	}
	return c.JSON(fiber.Map{
		"autorizacion_id":          rec.AutorizacionID,
		"numero_operacion":         numeroOperacion(rec.NumeroOperacion),
		"codigo_seguridad_enviado": res.CodigoSeguridadEnviado,
		"biometria_requerida":      rec.BiometriaRequerida,
		"estado":                   rec.Estado,
		"imagen_qr":                qr,
	})
}

// POST /consumo/otp
func (h *consumoHandlers) otp(c *fiber.Ctx) error {
	in, err := decode(c, &otpRequest{}, func(r *otpRequest) consumption.OTPInput { return consumption.OTPInput(*r) })
	if err != nil {
		return err
	}
	rec, err := h.svc.RegistrarOTP(consumoCtx(c), in)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{
		"success":         true,
		"autorizacion_id": rec.AutorizacionID,
		"estado":          rec.Estado,
		"message":         "OTP registered; confirm the consumption with /consumo/confirmar",
	})
}

type cuotaJSON struct {
	NumeroCuota      *int               `json:"numero_cuota"`
	FechaVencimiento *creditsystem.Date `json:"fecha_vencimiento"`
	ValorCapital     json.RawMessage    `json:"valor_capital"`
	ValorInteres     json.RawMessage    `json:"valor_interes"`
	ValorCuota       json.RawMessage    `json:"valor_cuota"`
}

type cupoAfectadoJSON struct {
	CodigoTipoCupo *string         `json:"cCodigoTipoCupo"`
	CupoDisponible json.RawMessage `json:"nCupoDisponible"`
	CupoUtilizado  json.RawMessage `json:"nCupoUtilizado"`
}

// POST /consumo/confirmar
func (h *consumoHandlers) confirmar(c *fiber.Ctx) error {
	in, err := decode(c, &confirmarRequest{}, func(r *confirmarRequest) consumption.ConfirmacionInput {
		fecha, _ := consumption.ParseFecha(r.FechaFactura) // zero when it does not parse: reported by its decoding problem
		return consumption.ConfirmacionInput{
			AutorizacionID: r.AutorizacionID,
			Factura: consumption.Factura{
				NumeroFactura: r.NumeroFactura, MontoFacturado: amount(r.MontoFacturado), FechaFactura: fecha,
				ValorIVA: optionalAmount(r.ValorIVA), ValorComision: optionalAmount(r.ValorComision),
			},
		}
	})
	if err != nil {
		return err
	}
	rec, res, err := h.svc.Confirmar(consumoCtx(c), in)
	if err != nil {
		return err
	}
	var tabla []cuotaJSON
	for _, q := range res.TablaAmortizacion {
		tabla = append(tabla, cuotaJSON{
			NumeroCuota: q.NumeroCuota, FechaVencimiento: q.FechaVencimiento,
			ValorCapital: money(q.ValorCapital), ValorInteres: money(q.ValorInteres), ValorCuota: money(q.ValorCuota),
		})
	}
	var cupos []cupoAfectadoJSON
	for _, cu := range res.CuposAfectados {
		cupos = append(cupos, cupoAfectadoJSON{
			CodigoTipoCupo: cu.CodigoTipoCupo, CupoDisponible: money(cu.CupoDisponible), CupoUtilizado: money(cu.CupoUtilizado),
		})
	}
	return c.JSON(fiber.Map{
		"autorizacion_id":    rec.AutorizacionID,
		"numero_operacion":   numeroOperacion(rec.NumeroOperacion),
		"fecha_max_pago":     res.FechaMaxPago,
		"estado":             rec.Estado,
		"tabla_amortizacion": tabla,
		"cupos_afectados":    cupos,
	})
}

// POST /consumo/reverso
func (h *consumoHandlers) reverso(c *fiber.Ctx) error {
	in, err := decode(c, &reversoRequest{}, func(r *reversoRequest) consumption.ReversoInput { return consumption.ReversoInput(*r) })
	if err != nil {
		return err
	}
	rec, err := h.svc.Reversar(consumoCtx(c), in)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{
		"success":         true,
		"autorizacion_id": rec.AutorizacionID,
		"estado":          rec.Estado,
		"message":         "Authorization reversed",
	})
}

// POST /consumo/reverso-consumo
func (h *consumoHandlers) reversoConsumo(c *fiber.Ctx) error {
	in, err := decode(c, &reversoConsumoRequest{}, func(r *reversoConsumoRequest) consumption.ReversoConsumoInput {
		return consumption.ReversoConsumoInput(*r)
	})
	if err != nil {
		return err
	}
	rec, err := h.svc.ReversarConsumo(consumoCtx(c), in)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{
		"success":         true,
		"autorizacion_id": rec.AutorizacionID,
		"estado":          rec.Estado,
		"numero_factura":  rec.NumeroFactura,
		"message":         "Consumption reversed",
	})
}

// intentoJSON is one audited upstream attempt of an authorization.
type intentoJSON struct {
	ID              int64   `json:"id"`
	Operacion       string  `json:"operacion"`
	Resultado       string  `json:"resultado"`
	CodigoUpstream  *int    `json:"codigo_upstream"`
	MensajeUpstream *string `json:"mensaje_upstream"`
	RequestID       *string `json:"request_id"`
	IniciadoAt      string  `json:"iniciado_at"`
	TerminadoAt     *string `json:"terminado_at"`
}

// consumoRecordJSON is the consumption record as GET /consumo/:autorizacion_id shows it: every
// field of the specification's record but the OTP (otp_registrado says whether one is), what
// holds it, whether the outcome of that operation is unknown, and the attempts.
type consumoRecordJSON struct {
	AutorizacionID       string          `json:"autorizacion_id"`
	NumeroOperacion      json.RawMessage `json:"numero_operacion"`
	Estado               string          `json:"estado"`
	CodigoEmpresa        string          `json:"codigo_empresa"`
	Identificacion       string          `json:"identificacion"`
	NumeroTarjeta        *string         `json:"numero_tarjeta"`
	CodigoProducto       *string         `json:"codigo_producto"`
	CodigoTipoCupo       *string         `json:"codigo_tipo_cupo"`
	CodigoTipoOperacion  *string         `json:"codigo_tipo_operacion"`
	Monto                json.RawMessage `json:"monto"`
	Plazo                int             `json:"plazo"`
	PuntoVenta           *string         `json:"punto_venta"`
	OTPRegistrado        bool            `json:"otp_registrado"`
	NumeroFactura        *string         `json:"numero_factura"`
	MontoFacturado       json.RawMessage `json:"monto_facturado"`
	FechaFactura         *string         `json:"fecha_factura"`
	BiometriaRequerida   bool            `json:"biometria_requerida"`
	SourceSystem         string          `json:"source_system"`
	OperacionEnCurso     *string         `json:"operacion_en_curso"`
	OperacionIniciadaAt  *string         `json:"operacion_iniciada_at"`
	ResultadoDesconocido bool            `json:"resultado_desconocido"`
	CreatedAt            string          `json:"created_at"`
	UpdatedAt            string          `json:"updated_at"`
	Intentos             []intentoJSON   `json:"intentos"`
}

func text(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func textTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	return text(httpx.FormatTime(t))
}

// GET /consumo/:autorizacion_id
func (h *consumoHandlers) get(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id := c.Params("autorizacion_id")
	rec, err := h.svc.Consumo(ctx, id)
	if err != nil {
		return err
	}
	intentos, err := h.svc.Intentos(ctx, id)
	if err != nil {
		return err
	}
	out := consumoRecordJSON{
		AutorizacionID: rec.AutorizacionID, NumeroOperacion: numeroOperacion(rec.NumeroOperacion), Estado: string(rec.Estado),
		CodigoEmpresa: rec.CodigoEmpresa, Identificacion: rec.Identificacion, NumeroTarjeta: text(rec.NumeroTarjeta),
		CodigoProducto: text(rec.CodigoProducto), CodigoTipoCupo: text(rec.CodigoTipoCupo), CodigoTipoOperacion: text(rec.CodigoTipoOperacion),
		Monto: money(&rec.Monto), Plazo: rec.Plazo, PuntoVenta: text(rec.PuntoVenta), OTPRegistrado: rec.OTPRegistrado(),
		NumeroFactura: text(rec.NumeroFactura), MontoFacturado: jsonDecimal(rec.MontoFacturado), FechaFactura: text(rec.FechaFactura.String()),
		BiometriaRequerida: rec.BiometriaRequerida, SourceSystem: rec.SourceSystem, OperacionEnCurso: text(rec.OperacionEnCurso),
		OperacionIniciadaAt: textTime(rec.OperacionIniciadaAt), ResultadoDesconocido: rec.ResultadoDesconocido,
		CreatedAt: httpx.FormatTime(rec.CreatedAt), UpdatedAt: httpx.FormatTime(rec.UpdatedAt), Intentos: []intentoJSON{},
	}
	for _, in := range intentos {
		out.Intentos = append(out.Intentos, intentoJSON{
			ID: in.ID, Operacion: in.Operacion, Resultado: string(in.Resultado), CodigoUpstream: in.CodigoUpstream,
			MensajeUpstream: text(in.MensajeUpstream), RequestID: text(in.RequestID),
			IniciadoAt: httpx.FormatTime(in.IniciadoAt), TerminadoAt: textTime(in.TerminadoAt),
		})
	}
	return c.JSON(out)
}
