package main

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/go-playground/validator/v10"
	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/platform/integrations/credit"
	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/httpx"
)

// Consumption module (credit-service.md, "Consumption module"): seven POST endpoints under
// /api/v1/credigestion/consumo, Bearer JWT only. The handlers decode and validate, call
// credit.Consumos and encode; the state machine, the in-flight claims and the audit live in
// the credit package. Decisions where the specification is silent:
//
//   - Every endpoint answers 200 on success.
//   - cupo answers the flat fields the specification lists: cliente, numero_tarjeta,
//     fecha_activacion, fecha_ultima_compra, fecha_ultimo_pago, then cCodigoTipoCupo,
//     cDescripcionTipoCupo, nCupoDisponible, nCupoAsignado, nCupoUtilizado of the first credit
//     line the creditsystem lists and cCodigoTipoOperacion, cDescripcionTipoOperacion,
//     nCupoDisponibleOpe of that line's first operation type (each null when there is no
//     such line or operation type). Beside them, cupos: [{cCodigoTipoCupo, ...,
//     operaciones: [{cCodigoTipoOperacion, ...}]}] carries every credit line with every
//     operation type (null when the creditsystem lists none).
//   - An optional field of financiacion (codigo_tipo_operacion, items) or of an item
//     (codigo_articulo, codigo_tipo_articulo, caracteristicas) that is absent, null, empty or
//     blank is left out of the SOAP request (neither sent empty nor as xsi:nil).
//   - financiacion wraps its options in "alternativas"; cuota_garantia_extendida and
//     cuota_entrada_minima are always present, null on the options without them.
//   - confirmar answers tabla_amortizacion and cupos_afectados as arrays of objects, plus
//     estado.
//   - Money is a JSON number with two decimals; dates are "yyyy-mm-dd"; an upstream member
//     that is nil, empty or absent (a list included) is null (translation rule 5).
//   - autorizacion also answers estado and imagen_qr, and accepts an optional otp (max 10):
//     when empty the configured CREDITSYSTEM_OTP_BYPASS is sent as cCodigoOtp (rule 2). That
//     otp is not the one /otp registers and is not stored.
//   - fecha_factura is from 1900-01-01 on (see fechaFacturaMinima).
//   - plazo and items[].cantidad are at most 2147483647: both are xs:int on the wire and plazo
//     is an INTEGER column, so a larger value would be granted upstream and then fail to store.
//   - Every monetary input is a numeric string (plain decimal text) with at most two decimals
//     and at most 16 digits before the point (what a DECIMAL(18,2) column and the SOAP
//     decimals hold). The amounts of the operation (financiacion and autorizacion monto,
//     confirmar monto_facturado) must be greater than zero; cuota_inicial, valor_iva,
//     valor_comision and items[].precio must not be negative (zero is allowed: no down
//     payment, no VAT, a free item). A violation is a 400 naming the field; nothing is sent
//     upstream or stored.
//   - A request on an authorization that another request holds (its creditsystem call is in
//     flight) is 409; so is every request on an authorization whose last money-moving call
//     timed out (outcome unknown) until an operator reconciles it. A state that does not allow
//     the operation is 400, naming the authorization and its state.

func init() {
	if err := httpx.RegisterValidation("caracteristicas", validateCaracteristicas,
		"must be pairs <code>:<value> joined by -"); err != nil {
		panic(err)
	}
	if err := httpx.RegisterValidation("fecha_factura", validateFechaFactura,
		"must be a date from "+fechaFacturaMinima+" on"); err != nil {
		panic(err)
	}
}

// fechaFacturaMinima is the earliest invoice date accepted. Year 0000 exists neither in
// PostgreSQL nor upstream, and 0001-01-01 is the zero date the record stores as NULL: either
// was confirmed by the creditsystem and then failed to store.
const fechaFacturaMinima = "1900-01-01"

func validateFechaFactura(fl validator.FieldLevel) bool {
	s, ok := fl.Field().Interface().(string)
	if !ok {
		return false
	}
	t, err := time.Parse(time.DateOnly, s)
	minima, _ := time.Parse(time.DateOnly, fechaFacturaMinima)
	return err == nil && !t.Before(minima)
}

// validateCaracteristicas: "<code>:<value>" pairs joined by "-", each with one colon and a
// non-blank code and value, so pairs joined by another separator ("A:1,B:2", "A:1;B:2") or a
// pair without its value ("A:") are refused rather than sent upstream as one odd pair.
func validateCaracteristicas(fl validator.FieldLevel) bool {
	s, ok := fl.Field().Interface().(string)
	if !ok {
		return false
	}
	for pair := range strings.SplitSeq(s, "-") {
		code, value, found := strings.Cut(pair, ":")
		if !found || strings.TrimSpace(code) == "" || strings.TrimSpace(value) == "" || strings.Contains(value, ":") {
			return false
		}
	}
	return true
}

// registerConsumoRoutes mounts the consumption module under api (/api/v1/credigestion).
func registerConsumoRoutes(api fiber.Router, s *server) {
	consumos, err := credit.NewConsumos(s.db, s.cs, credit.WithConsumosLogger(s.log))
	if err != nil {
		panic(err) // nil database or creditsystem client: a wiring mistake
	}
	h := &consumoHandlers{consumos: consumos}
	bearer := auth.Require(s.authn, auth.Bearer)
	g := api.Group("/consumo")
	g.Post("/cupo", bearer, h.cupo)
	g.Post("/financiacion", bearer, h.financiacion)
	g.Post("/autorizacion", bearer, h.autorizacion)
	g.Post("/otp", bearer, h.otp)
	g.Post("/confirmar", bearer, h.confirmar)
	g.Post("/reverso", bearer, h.reverso)
	g.Post("/reverso-consumo", bearer, h.reversoConsumo)
}

type consumoHandlers struct {
	consumos *credit.Consumos
}

// ctx carries the request id to the audit of upstream attempts.
func consumoCtx(c *fiber.Ctx) context.Context {
	return credit.WithRequestID(c.UserContext(), httpx.RequestID(c))
}

// Requests. Validation follows the endpoint tables; each failed rule is one `errors` entry.

type articuloRequest struct {
	CodigoArticulo     string `json:"codigo_articulo"`
	TextoArticulo      string `json:"texto_articulo" validate:"required,notblank"`
	Cantidad           *int   `json:"cantidad" validate:"required,min=1,max=2147483647"`
	Precio             string `json:"precio" validate:"required,numeric_string,nonnegative,max_decimals=2,max_integer_digits=16"`
	CodigoTipoArticulo string `json:"codigo_tipo_articulo"`
	Caracteristicas    string `json:"caracteristicas" validate:"omitempty,caracteristicas"`
}

func articulos(items []articuloRequest) []creditsystem.Articulo {
	if len(items) == 0 {
		return nil
	}
	out := make([]creditsystem.Articulo, len(items))
	for i, it := range items {
		out[i] = creditsystem.Articulo{
			CodigoArticulo: optional(it.CodigoArticulo), TextoArticulo: it.TextoArticulo, Cantidad: *it.Cantidad,
			Precio: mustDecimal(it.Precio), CodigoTipoArticulo: optional(it.CodigoTipoArticulo), Caracteristicas: optional(it.Caracteristicas),
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

// mustDecimal parses text the numeric_string rule already accepted.
func mustDecimal(s string) decimal.Decimal {
	return decimal.RequireFromString(s)
}

func optionalDecimal(s string) *decimal.Decimal {
	if s == "" {
		return nil
	}
	d := mustDecimal(s)
	return &d
}

type cupoRequest struct {
	CodigoEmpresa  string `json:"codigo_empresa" validate:"required,notblank,max=20"`
	Identificacion string `json:"identificacion" validate:"required,notblank,max=50"`
	NumeroTarjeta  string `json:"numero_tarjeta" validate:"omitempty,max=20"`
}

type financiacionRequest struct {
	CodigoEmpresa       string            `json:"codigo_empresa" validate:"required,notblank,max=20"`
	NumeroTarjeta       string            `json:"numero_tarjeta" validate:"required,notblank,max=20"`
	CodigoProducto      string            `json:"codigo_producto" validate:"required,notblank,max=3"`
	CodigoTipoCupo      string            `json:"codigo_tipo_cupo" validate:"required,notblank,max=3"`
	CodigoTipoOperacion string            `json:"codigo_tipo_operacion" validate:"omitempty,max=3"`
	Monto               string            `json:"monto" validate:"required,numeric_string,positive,max_decimals=2,max_integer_digits=16"`
	Items               []articuloRequest `json:"items" validate:"omitempty,dive"`
}

type autorizacionRequest struct {
	CodigoEmpresa       string            `json:"codigo_empresa" validate:"required,notblank,max=20"`
	Identificacion      string            `json:"identificacion" validate:"required,notblank,max=50"`
	NumeroTarjeta       string            `json:"numero_tarjeta" validate:"required,notblank,max=20"`
	CodigoProducto      string            `json:"codigo_producto" validate:"required,notblank,max=3"`
	Plazo               *int              `json:"plazo" validate:"required,min=1,max=2147483647"`
	Monto               string            `json:"monto" validate:"required,numeric_string,positive,max_decimals=2,max_integer_digits=16"`
	PuntoVenta          string            `json:"punto_venta" validate:"required,notblank,max=50"`
	CodigoTipoCupo      string            `json:"codigo_tipo_cupo" validate:"omitempty,max=3"`
	CodigoTipoOperacion string            `json:"codigo_tipo_operacion" validate:"omitempty,max=3"`
	CuotaInicial        string            `json:"cuota_inicial" validate:"omitempty,numeric_string,nonnegative,max_decimals=2,max_integer_digits=16"`
	GarantiaExtendida   bool              `json:"garantia_extendida"`
	Items               []articuloRequest `json:"items" validate:"omitempty,dive"`
	OTP                 string            `json:"otp" validate:"omitempty,max=10"`
}

type otpRequest struct {
	AutorizacionID string `json:"autorizacion_id" validate:"required,notblank,max=50"`
	OTP            string `json:"otp" validate:"required,notblank,max=10"`
}

type confirmarRequest struct {
	AutorizacionID string `json:"autorizacion_id" validate:"required,notblank,max=50"`
	NumeroFactura  string `json:"numero_factura" validate:"required,notblank,max=50"`
	MontoFacturado string `json:"monto_facturado" validate:"required,numeric_string,positive,max_decimals=2,max_integer_digits=16"`
	FechaFactura   string `json:"fecha_factura" validate:"required,max=10,date_ymd,fecha_factura"`
	ValorIVA       string `json:"valor_iva" validate:"omitempty,numeric_string,nonnegative,max_decimals=2,max_integer_digits=16"`
	ValorComision  string `json:"valor_comision" validate:"omitempty,numeric_string,nonnegative,max_decimals=2,max_integer_digits=16"`
}

type reversoRequest struct {
	AutorizacionID string `json:"autorizacion_id" validate:"required,notblank,max=50"`
	NumeroTarjeta  string `json:"numero_tarjeta" validate:"omitempty,max=20"`
	Identificacion string `json:"identificacion" validate:"omitempty,max=50"`
}

type reversoConsumoRequest struct {
	AutorizacionID string `json:"autorizacion_id" validate:"required,notblank,max=50"`
	NumeroTarjeta  string `json:"numero_tarjeta" validate:"omitempty,max=20"`
}

// Answers.

// money is an upstream amount as a JSON number with two decimals, or null.
func money(d *decimal.Decimal) json.RawMessage {
	if d == nil {
		return credit.JSONDecimal(decimal.NullDecimal{})
	}
	return credit.JSONDecimal(decimal.NewNullDecimal(*d))
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
	var req cupoRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	res, err := h.consumos.Cupo(consumoCtx(c), creditsystem.ConsultarTarjetaRequest{
		Identificacion: req.Identificacion, NumeroTarjeta: req.NumeroTarjeta,
	})
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
	var req financiacionRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	res, err := h.consumos.Financiacion(consumoCtx(c), creditsystem.ConsultarAlternativaFinanciacionRequest{
		NumeroTarjeta: req.NumeroTarjeta, CodigoProducto: req.CodigoProducto, CodigoTipoCupo: req.CodigoTipoCupo,
		CodigoTipoOperacion: optional(req.CodigoTipoOperacion), Monto: mustDecimal(req.Monto), Articulos: articulos(req.Items),
	})
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
	var req autorizacionRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	rec, res, err := h.consumos.Autorizar(consumoCtx(c), credit.AutorizacionInput{
		CodigoEmpresa: req.CodigoEmpresa,
		Solicitud: creditsystem.GrabarAutorizacionRequest{
			Identificacion: req.Identificacion, NumeroTarjeta: req.NumeroTarjeta, CodigoProducto: req.CodigoProducto,
			CodigoTipoCupo: req.CodigoTipoCupo, CodigoTipoOperacion: req.CodigoTipoOperacion, Plazo: *req.Plazo,
			Monto: mustDecimal(req.Monto), CuotaInicial: optionalDecimal(req.CuotaInicial),
			GarantiaExtendida: req.GarantiaExtendida, PuntoVenta: req.PuntoVenta, Articulos: articulos(req.Items),
			Otp: req.OTP,
		},
	})
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
	var req otpRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	rec, err := h.consumos.RegistrarOTP(consumoCtx(c), req.AutorizacionID, req.OTP)
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
	var req confirmarRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	fecha, err := credit.ParseFecha(req.FechaFactura)
	if err != nil {
		return httpx.ValidationError("fecha_factura must be a date in yyyy-mm-dd format")
	}
	rec, res, err := h.consumos.Confirmar(consumoCtx(c), credit.ConfirmacionInput{
		AutorizacionID: req.AutorizacionID,
		Factura: credit.Factura{
			NumeroFactura: req.NumeroFactura, MontoFacturado: mustDecimal(req.MontoFacturado), FechaFactura: fecha,
			ValorIVA: optionalDecimal(req.ValorIVA), ValorComision: optionalDecimal(req.ValorComision),
		},
	})
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
	var req reversoRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	rec, err := h.consumos.Reversar(consumoCtx(c), credit.ReversoInput{
		AutorizacionID: req.AutorizacionID, NumeroTarjeta: req.NumeroTarjeta, Identificacion: req.Identificacion,
	})
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
	var req reversoConsumoRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	rec, err := h.consumos.ReversarConsumo(consumoCtx(c), credit.ReversoConsumoInput{
		AutorizacionID: req.AutorizacionID, NumeroTarjeta: req.NumeroTarjeta,
	})
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
