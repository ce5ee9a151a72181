package consumption

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/internal/validation"
)

// ValidationError lists every broken rule of an input, one [Problem] each, named by the
// specification's field (items[0].precio for an article).
type ValidationError = validation.Error

// Problem is one entry of a ValidationError.
type Problem = validation.Problem

// Money rules: every amount has at most two decimals and at most 16 digits before the point
// (what a DECIMAL(18,2) column and the SOAP decimals hold).
const (
	moneyDecimals  = 2
	moneyIntDigits = 16
)

// MaxInt is the largest plazo and cantidad: both are xs:int on the wire and plazo is an INTEGER
// column, so a larger value would be granted upstream and then fail to store.
const MaxInt = math.MaxInt32

// FechaFacturaMinima is the earliest invoice date: year 0000 exists neither in PostgreSQL nor
// upstream, and 0001-01-01 is the zero date the record stores as NULL.
var FechaFacturaMinima = Fecha{time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)}

// CupoInput asks for a customer's credit lines. Nothing is stored.
type CupoInput struct {
	CodigoEmpresa  string
	Identificacion string
	NumeroTarjeta  string // optional: the creditsystem falls back to the identification
}

// Validate checks the lengths of the specification (codigo_empresa 20 and identificacion 50,
// both required; numero_tarjeta 20).
func (in CupoInput) Validate() error {
	var p validation.Problems
	p.Text("codigo_empresa", in.CodigoEmpresa, true, 20)
	p.Text("identificacion", in.Identificacion, true, 50)
	p.Text("numero_tarjeta", in.NumeroTarjeta, false, 20)
	return p.Err()
}

// Articulo is one article of a financing query or an authorization.
type Articulo struct {
	CodigoArticulo     string // optional
	TextoArticulo      string
	Cantidad           int
	Precio             decimal.Decimal
	CodigoTipoArticulo string // optional
	Caracteristicas    string // optional: pairs <code>:<value> joined by -
}

func (a Articulo) check(p *validation.Problems, i int) {
	field := func(name string) string { return fmt.Sprintf("items[%d].%s", i, name) }
	p.Text(field("texto_articulo"), a.TextoArticulo, true, 0)
	p.Between(field("cantidad"), int64(a.Cantidad), 1, MaxInt)
	p.Amount(field("precio"), a.Precio, validation.NonNegative, moneyDecimals, moneyIntDigits)
	if a.Caracteristicas != "" && !caracteristicasValidas(a.Caracteristicas) {
		p.Add(field("caracteristicas"), "must be pairs <code>:<value> joined by -")
	}
}

// caracteristicasValidas: "<code>:<value>" pairs joined by "-", each with one colon and a
// non-blank code and value, so pairs joined by another separator ("A:1,B:2") or a pair without
// its value ("A:") are refused rather than sent upstream as one odd pair.
func caracteristicasValidas(s string) bool {
	for pair := range strings.SplitSeq(s, "-") {
		code, value, found := strings.Cut(pair, ":")
		if !found || strings.TrimSpace(code) == "" || strings.TrimSpace(value) == "" || strings.Contains(value, ":") {
			return false
		}
	}
	return true
}

// FinanciacionInput asks for the financing alternatives of an amount. Nothing is stored.
type FinanciacionInput struct {
	CodigoEmpresa       string
	NumeroTarjeta       string
	CodigoProducto      string
	CodigoTipoCupo      string
	CodigoTipoOperacion string // optional
	Monto               decimal.Decimal
	Items               []Articulo // optional
}

// Validate checks lengths (codigo_empresa 20, numero_tarjeta 20, codigo_producto 3,
// codigo_tipo_cupo 3, all required; codigo_tipo_operacion 3), monto (greater than zero) and each
// article.
func (in FinanciacionInput) Validate() error {
	var p validation.Problems
	p.Text("codigo_empresa", in.CodigoEmpresa, true, 20)
	p.Text("numero_tarjeta", in.NumeroTarjeta, true, 20)
	p.Text("codigo_producto", in.CodigoProducto, true, 3)
	p.Text("codigo_tipo_cupo", in.CodigoTipoCupo, true, 3)
	p.Text("codigo_tipo_operacion", in.CodigoTipoOperacion, false, 3)
	p.Amount("monto", in.Monto, validation.Positive, moneyDecimals, moneyIntDigits)
	for i, a := range in.Items {
		a.check(&p, i)
	}
	return p.Err()
}

// AutorizacionInput asks for an authorization. CodigoEmpresa is the caller's and is stored on
// the record; the creditsystem receives the configured company code.
type AutorizacionInput struct {
	CodigoEmpresa       string
	Identificacion      string
	NumeroTarjeta       string
	CodigoProducto      string
	Plazo               int
	Monto               decimal.Decimal
	PuntoVenta          string
	CodigoTipoCupo      string           // optional
	CodigoTipoOperacion string           // optional
	CuotaInicial        *decimal.Decimal // optional down payment
	GarantiaExtendida   bool
	Items               []Articulo // optional
	// OTP is sent as cCodigoOtp; empty sends the configured bypass code. It is not the OTP
	// registered with RegistrarOTP and is never stored.
	OTP string
}

// Validate checks lengths (codigo_empresa 20, identificacion 50, numero_tarjeta 20,
// codigo_producto 3, punto_venta 50, all required; codigo_tipo_cupo and codigo_tipo_operacion 3,
// otp 10), plazo (1..MaxInt), monto (greater than zero), cuota_inicial (not negative) and each
// article.
func (in AutorizacionInput) Validate() error {
	var p validation.Problems
	p.Text("codigo_empresa", in.CodigoEmpresa, true, 20)
	p.Text("identificacion", in.Identificacion, true, 50)
	p.Text("numero_tarjeta", in.NumeroTarjeta, true, 20)
	p.Text("codigo_producto", in.CodigoProducto, true, 3)
	p.Between("plazo", int64(in.Plazo), 1, MaxInt)
	p.Amount("monto", in.Monto, validation.Positive, moneyDecimals, moneyIntDigits)
	p.Text("punto_venta", in.PuntoVenta, true, 50)
	p.Text("codigo_tipo_cupo", in.CodigoTipoCupo, false, 3)
	p.Text("codigo_tipo_operacion", in.CodigoTipoOperacion, false, 3)
	if in.CuotaInicial != nil {
		p.Amount("cuota_inicial", *in.CuotaInicial, validation.NonNegative, moneyDecimals, moneyIntDigits)
	}
	for i, a := range in.Items {
		a.check(&p, i)
	}
	p.Text("otp", in.OTP, false, 10)
	return p.Err()
}

// OTPInput registers the customer's OTP on an authorization.
type OTPInput struct {
	AutorizacionID string
	OTP            string
}

// Validate checks autorizacion_id (50) and otp (10), both required.
func (in OTPInput) Validate() error {
	var p validation.Problems
	p.Text("autorizacion_id", in.AutorizacionID, true, 50)
	p.Text("otp", in.OTP, true, 10)
	return p.Err()
}

// ConfirmacionInput confirms an authorization with its invoice.
type ConfirmacionInput struct {
	AutorizacionID string
	Factura        Factura
}

// Validate checks autorizacion_id (50) and numero_factura (50), both required, monto_facturado
// (greater than zero), fecha_factura (from FechaFacturaMinima on), valor_iva and
// valor_comision (not negative).
func (in ConfirmacionInput) Validate() error {
	var p validation.Problems
	f := in.Factura
	p.Text("autorizacion_id", in.AutorizacionID, true, 50)
	p.Text("numero_factura", f.NumeroFactura, true, 50)
	p.Amount("monto_facturado", f.MontoFacturado, validation.Positive, moneyDecimals, moneyIntDigits)
	if f.FechaFactura.Before(FechaFacturaMinima.Time) { // the zero date too
		p.Add("fecha_factura", "must be a date from "+FechaFacturaMinima.String()+" on")
	}
	if f.ValorIVA != nil {
		p.Amount("valor_iva", *f.ValorIVA, validation.NonNegative, moneyDecimals, moneyIntDigits)
	}
	if f.ValorComision != nil {
		p.Amount("valor_comision", *f.ValorComision, validation.NonNegative, moneyDecimals, moneyIntDigits)
	}
	return p.Err()
}

// ReversoInput reverses an authorization; an empty card or identification is taken from the
// record.
type ReversoInput struct {
	AutorizacionID string
	NumeroTarjeta  string
	Identificacion string
}

// Validate checks autorizacion_id (50, required), numero_tarjeta (20) and identificacion (50).
func (in ReversoInput) Validate() error {
	var p validation.Problems
	p.Text("autorizacion_id", in.AutorizacionID, true, 50)
	p.Text("numero_tarjeta", in.NumeroTarjeta, false, 20)
	p.Text("identificacion", in.Identificacion, false, 50)
	return p.Err()
}

// ReversoConsumoInput reverses a confirmed consumption; an empty card is taken from the record.
type ReversoConsumoInput struct {
	AutorizacionID string
	NumeroTarjeta  string
}

// Validate checks autorizacion_id (50, required) and numero_tarjeta (20).
func (in ReversoConsumoInput) Validate() error {
	var p validation.Problems
	p.Text("autorizacion_id", in.AutorizacionID, true, 50)
	p.Text("numero_tarjeta", in.NumeroTarjeta, false, 20)
	return p.Err()
}
