package consumption

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
)

// Estado is the state of a consumption record.
type Estado string

// The states of the specification. REVERSADO and CONSUMO_REVERSADO are final.
const (
	EstadoAutorizado       Estado = "AUTORIZADO"
	EstadoOTPRecibido      Estado = "OTP_RECIBIDO"
	EstadoConsumido        Estado = "CONSUMIDO"
	EstadoReversado        Estado = "REVERSADO"
	EstadoConsumoReversado Estado = "CONSUMO_REVERSADO"
)

// Operacion is a trigger of the consumption state machine, named after its endpoint.
type Operacion string

// The triggers that act on an existing record.
const (
	OpOTP            Operacion = "otp"
	OpConfirmar      Operacion = "confirmar"
	OpReverso        Operacion = "reverso"
	OpReversoConsumo Operacion = "reverso-consumo"
)

// Names of the upstream operations, as the creditsystem and the audit call them.
const (
	UpstreamConsultarTarjeta                 = "ConsultarTarjeta"
	UpstreamConsultarAlternativaFinanciacion = "ConsultarAlternativaFinanciacion"
	UpstreamGrabarAutorizacion               = "GrabarAutorizacion"
	UpstreamGrabarConsumo                    = "GrabarConsumo"
	UpstreamGrabarReversoAutorizacion        = "GrabarReversoAutorizacion"
	UpstreamGrabarReversoConsumo             = "GrabarReversoConsumo"
)

// transicion is one row of the specification's table of transitions.
type transicion struct {
	desde    []Estado
	hacia    Estado
	upstream string // empty for a local checkpoint
}

// transiciones is the state machine. /reverso from OTP_RECIBIDO is not shown by the
// specification; its rules forbid /reverso only from CONSUMIDO and REVERSADO, so it is allowed
// (an authorization whose OTP arrived can still be cancelled before confirmation).
// CONSUMO_REVERSADO is final, so /reverso is refused there too.
var transiciones = map[Operacion]transicion{
	OpOTP:            {desde: []Estado{EstadoAutorizado}, hacia: EstadoOTPRecibido},
	OpConfirmar:      {desde: []Estado{EstadoAutorizado, EstadoOTPRecibido}, hacia: EstadoConsumido, upstream: UpstreamGrabarConsumo},
	OpReverso:        {desde: []Estado{EstadoAutorizado, EstadoOTPRecibido}, hacia: EstadoReversado, upstream: UpstreamGrabarReversoAutorizacion},
	OpReversoConsumo: {desde: []Estado{EstadoConsumido}, hacia: EstadoConsumoReversado, upstream: UpstreamGrabarReversoConsumo},
}

// opDeUpstream maps an in-flight marker back to its trigger.
func opDeUpstream(upstream string) (Operacion, bool) {
	for op, t := range transiciones {
		if t.upstream != "" && t.upstream == upstream {
			return op, true
		}
	}
	return "", false
}

// SourceSystemDefault is the origin stored when the caller names none.
const SourceSystemDefault = "PLATFORM"

// Consumo is the consumption record: one per authorization granted by the creditsystem.
type Consumo struct {
	bun.BaseModel `bun:"table:consumos"`

	ID                  int64           `bun:"id,pk,autoincrement"`
	AutorizacionID      string          `bun:"autorizacion_id,notnull"`
	NumeroOperacion     string          `bun:"numero_operacion,nullzero"`
	Estado              Estado          `bun:"estado,notnull"`
	CodigoEmpresa       string          `bun:"codigo_empresa,notnull"`
	Identificacion      string          `bun:"identificacion,notnull"`
	NumeroTarjeta       string          `bun:"numero_tarjeta,nullzero"`
	CodigoProducto      string          `bun:"codigo_producto,nullzero"`
	CodigoTipoCupo      string          `bun:"codigo_tipo_cupo,nullzero"`
	CodigoTipoOperacion string          `bun:"codigo_tipo_operacion,nullzero"`
	Monto               decimal.Decimal `bun:"monto,notnull"`
	Plazo               int             `bun:"plazo,notnull"`
	PuntoVenta          string          `bun:"punto_venta,nullzero"`
	// OTPSellado is the customer's OTP registered at /otp, sealed (encrypted; see
	// Service.RegistrarOTP), kept until the flow ends (the record is confirmed or reversed);
	// empty when none was registered. OTP is where records of earlier versions kept it in clear:
	// read, never written, and emptied with it. The bypass code is never stored.
	OTPSellado     string              `bun:"otp_sellado,nullzero"`
	OTP            string              `bun:"otp,nullzero"`
	NumeroFactura  string              `bun:"numero_factura,nullzero"`
	MontoFacturado decimal.NullDecimal `bun:"monto_facturado"`
	FechaFactura   Fecha               `bun:"fecha_factura"`
	// Raw upstream answers, as the SDK decoded them, marshalled to JSON.
	CreditsystemAuthResponse    json.RawMessage `bun:"creditsystem_auth_response"`
	CreditsystemConsumoResponse json.RawMessage `bun:"creditsystem_consumo_response"`
	BiometriaRequerida          bool            `bun:"biometria_requerida,notnull"`
	ImagenQR                    string          `bun:"imagen_qr,nullzero"`
	SourceSystem                string          `bun:"source_system,notnull"`

	// OperacionEnCurso is the in-flight marker: the upstream operation that holds the record
	// (for example "GrabarConsumo"), empty when the record is free. It is committed before the
	// upstream call so that no second request can call upstream for the same record.
	OperacionEnCurso string `bun:"operacion_en_curso,nullzero"`
	// OperacionIniciadaAt is when the marker was set.
	OperacionIniciadaAt time.Time `bun:"operacion_iniciada_at,nullzero"`
	// ResultadoDesconocido is set when the operation in OperacionEnCurso timed out or lost its
	// connection: the creditsystem may or may not have applied it, so the record stays held
	// until an operator reconciles it (see [Service.Reconciliar]).
	ResultadoDesconocido bool `bun:"resultado_desconocido,notnull"`
	// FacturaEnCurso is the invoice of the confirmation that holds the record, kept so that an
	// operator's reconciliation completes it from the record alone; nil otherwise.
	FacturaEnCurso *Factura `bun:"operacion_factura"`

	CreatedAt time.Time `bun:"created_at,notnull"`
	UpdatedAt time.Time `bun:"updated_at,notnull"`
	// Version counts the writes of the record; every write is a compare-and-set on it.
	Version int64 `bun:"version,notnull"`
}

// Factura is the invoice data sent with a confirmation and stored when it succeeds.
type Factura struct {
	NumeroFactura  string           `json:"numero_factura"`
	MontoFacturado decimal.Decimal  `json:"monto_facturado"`
	FechaFactura   Fecha            `json:"fecha_factura"`
	ValorIVA       *decimal.Decimal `json:"valor_iva,omitempty"`      // optional, sent upstream only
	ValorComision  *decimal.Decimal `json:"valor_comision,omitempty"` // optional, sent upstream only
}

// permite reports whether op may start on c now: the state must allow it and no other operation
// may hold the record.
func (c *Consumo) permite(op Operacion) error {
	if c.OperacionEnCurso != "" {
		return &ConflictError{AutorizacionID: c.AutorizacionID, Operacion: c.OperacionEnCurso,
			Desde: c.OperacionIniciadaAt, ResultadoDesconocido: c.ResultadoDesconocido}
	}
	t, ok := transiciones[op]
	if !ok {
		return fmt.Errorf("consumption: unknown operation %q", op)
	}
	if !slices.Contains(t.desde, c.Estado) {
		return &StateError{AutorizacionID: c.AutorizacionID, Estado: c.Estado, Operacion: op}
	}
	if op == OpReversoConsumo && c.NumeroFactura == "" {
		return &NoInvoiceError{AutorizacionID: c.AutorizacionID}
	}
	return nil
}

// RegistrarOTP stores the customer's OTP, sealed: AUTORIZADO -> OTP_RECIBIDO, no upstream call.
func (c *Consumo) RegistrarOTP(sellado string, now time.Time) error {
	if err := c.permite(OpOTP); err != nil {
		return err
	}
	c.OTPSellado, c.OTP = sellado, ""
	c.Estado = EstadoOTPRecibido
	c.UpdatedAt = now
	return nil
}

// OTPRegistrado reports whether an OTP was registered and is still kept.
func (c *Consumo) OTPRegistrado() bool { return c.OTPSellado != "" || c.OTP != "" }

// IniciarOperacion sets the in-flight marker for the upstream call of op, when the state allows
// op. The store commits the marker before the upstream call.
func (c *Consumo) IniciarOperacion(op Operacion, now time.Time) error {
	if err := c.permite(op); err != nil {
		return err
	}
	t := transiciones[op]
	if t.upstream == "" {
		return fmt.Errorf("consumption: %s calls no upstream operation", op)
	}
	c.OperacionEnCurso = t.upstream
	c.OperacionIniciadaAt = now
	c.ResultadoDesconocido = false
	c.UpdatedAt = now
	return nil
}

// completar moves c to the target state of op once its upstream call succeeded.
func (c *Consumo) completar(op Operacion, now time.Time) error {
	t := transiciones[op]
	if c.OperacionEnCurso != t.upstream || t.upstream == "" {
		return fmt.Errorf("%w: %s completed without holding the record (held by %q)", ErrNotHeld, op, c.OperacionEnCurso)
	}
	if !slices.Contains(t.desde, c.Estado) {
		return &StateError{AutorizacionID: c.AutorizacionID, Estado: c.Estado, Operacion: op}
	}
	c.Estado = t.hacia
	c.OperacionEnCurso = ""
	c.OperacionIniciadaAt = time.Time{}
	c.ResultadoDesconocido = false
	c.FacturaEnCurso = nil
	// The flow that needed the OTP is over.
	c.OTPSellado, c.OTP = "", ""
	c.UpdatedAt = now
	return nil
}

// Confirmar records an accepted GrabarConsumo: -> CONSUMIDO with the invoice data and the raw
// answer. numeroOperacion replaces the stored one when the answer carries one.
func (c *Consumo) Confirmar(f Factura, numeroOperacion string, respuesta json.RawMessage, now time.Time) error {
	if err := c.completar(OpConfirmar, now); err != nil {
		return err
	}
	c.NumeroFactura = f.NumeroFactura
	c.MontoFacturado = decimal.NewNullDecimal(f.MontoFacturado)
	c.FechaFactura = f.FechaFactura
	if numeroOperacion != "" {
		c.NumeroOperacion = numeroOperacion
	}
	c.CreditsystemConsumoResponse = respuesta
	return nil
}

// Reversar records an accepted GrabarReversoAutorizacion: -> REVERSADO.
func (c *Consumo) Reversar(now time.Time) error { return c.completar(OpReverso, now) }

// ReversarConsumo records an accepted GrabarReversoConsumo: -> CONSUMO_REVERSADO.
func (c *Consumo) ReversarConsumo(now time.Time) error { return c.completar(OpReversoConsumo, now) }

// LiberarOperacion drops the in-flight marker after the creditsystem definitely did not apply
// the operation (it answered with a rejection or a fault): the state is unchanged.
func (c *Consumo) LiberarOperacion(now time.Time) {
	c.OperacionEnCurso = ""
	c.OperacionIniciadaAt = time.Time{}
	c.ResultadoDesconocido = false
	c.FacturaEnCurso = nil
	c.UpdatedAt = now
}

// Envejecer flags the outcome unknown when the operation holding c started before staleBefore:
// its process died during the call (a live call ends within the creditsystem timeout), so the
// record would otherwise look in flight for ever.
func (c *Consumo) Envejecer(staleBefore time.Time) {
	if c.OperacionEnCurso != "" && !c.ResultadoDesconocido && c.OperacionIniciadaAt.Before(staleBefore) {
		c.ResultadoDesconocido = true
	}
}

// MarcarResultadoDesconocido keeps the in-flight marker and flags that the creditsystem may have
// applied the operation: every later operation on the record gets [ErrOutcomeUnknown] until an
// operator reconciles it.
func (c *Consumo) MarcarResultadoDesconocido(now time.Time) {
	c.ResultadoDesconocido = true
	c.UpdatedAt = now
}

// Fecha is a calendar date (yyyy-mm-dd) stored as DATE on PostgreSQL and as text on SQLite.
type Fecha struct {
	time.Time
}

// FechaLayout is the wire and storage layout of a [Fecha].
const FechaLayout = time.DateOnly

// ParseFecha parses a yyyy-mm-dd date.
func ParseFecha(s string) (Fecha, error) {
	t, err := time.Parse(FechaLayout, s)
	if err != nil {
		return Fecha{}, fmt.Errorf("consumption: date %q is not yyyy-mm-dd", s)
	}
	return Fecha{t}, nil
}

// String returns yyyy-mm-dd, or "" for the zero date.
func (f Fecha) String() string {
	if f.IsZero() {
		return ""
	}
	return f.Format(FechaLayout)
}

// Value stores the zero date as NULL.
func (f Fecha) Value() (driver.Value, error) {
	if f.IsZero() {
		return nil, nil
	}
	return f.Format(FechaLayout), nil
}

// Scan accepts what either engine returns for a DATE column.
func (f *Fecha) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*f = Fecha{}
		return nil
	case time.Time:
		*f = Fecha{time.Date(v.Year(), v.Month(), v.Day(), 0, 0, 0, 0, time.UTC)}
		return nil
	case string:
		return f.scanText(v)
	case []byte:
		return f.scanText(string(v))
	}
	return fmt.Errorf("consumption: cannot scan %T into a date", src)
}

func (f *Fecha) scanText(s string) error {
	if len(s) > len(FechaLayout) {
		s = s[:len(FechaLayout)]
	}
	p, err := ParseFecha(s)
	if err != nil {
		return err
	}
	*f = p
	return nil
}

// clone returns a copy of c that shares no memory with it.
func (c *Consumo) clone() Consumo {
	cp := *c
	cp.CreditsystemAuthResponse = bytes.Clone(c.CreditsystemAuthResponse)
	cp.CreditsystemConsumoResponse = bytes.Clone(c.CreditsystemConsumoResponse)
	if f := c.FacturaEnCurso; f != nil {
		fc := *f
		if f.ValorIVA != nil {
			v := *f.ValorIVA
			fc.ValorIVA = &v
		}
		if f.ValorComision != nil {
			v := *f.ValorComision
			fc.ValorComision = &v
		}
		cp.FacturaEnCurso = &fc
	}
	return cp
}
