package payments

import (
	"encoding/json"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
)

// Estado is the state of a payment in the ledger.
type Estado string

// States of a payment. PENDIENTE is written before GrabarPagoTarjeta is called; the call ends it
// APLICADO, RECHAZADO (the creditsystem refused it, answered a fault, or could not be reached)
// or DESCONOCIDO (no answer in time: it may have been applied). A debt query after the timeout
// turns DESCONOCIDO into APLICADO or NO_APLICADO. An applied payment may be REVERSADO.
const (
	EstadoPendiente   Estado = "PENDIENTE"
	EstadoAplicado    Estado = "APLICADO"
	EstadoRechazado   Estado = "RECHAZADO"
	EstadoDesconocido Estado = "DESCONOCIDO"
	EstadoNoAplicado  Estado = "NO_APLICADO"
	EstadoReversado   Estado = "REVERSADO"
)

// Upstream operations, as named on the wire.
const (
	UpstreamConsultarDeuda = "ConsultarDeudaTarjeta"
	UpstreamGrabarPago     = "GrabarPagoTarjeta"
	UpstreamGrabarReverso  = "GrabarReversoPagoTarjeta"
)

// Pago is one payment of the ledger and, once applied, its reversal. Money is decimal; the
// lists are the creditsystem's answers as the service shows them (camelCase JSON).
type Pago struct {
	bun.BaseModel `bun:"table:pagos"`

	ID            int64  `bun:"id,pk,autoincrement"`
	NumeroTarjeta string `bun:"numero_tarjeta,notnull"`
	// NumeroOperacion is the creditsystem's number of the applied payment (nil until then, and
	// for a payment found applied by a debt query, whose number the creditsystem never gave).
	NumeroOperacion *int64          `bun:"numero_operacion"`
	Estado          Estado          `bun:"estado,notnull"`
	ValorPago       decimal.Decimal `bun:"valor_pago,notnull"`
	FechaPago       string          `bun:"fecha_pago,notnull"` // yyyy-mm-dd
	FormasPago      []FormaPago     `bun:"formas_pago,type:json,notnull"`

	FacturasAfectadas []Factura `bun:"facturas_afectadas,type:json"`
	RubrosAplicados   []Rubro   `bun:"rubros_aplicados,type:json"`
	Cupos             []Cupo    `bun:"cupos,type:json"`
	// PagoContadoAntes is the cash amount the service read just before sending the payment:
	// set means the payment may have been sent (the evidence a debt query is compared with).
	PagoContadoAntes decimal.NullDecimal `bun:"pago_contado_antes"`
	CodigoUpstream   *int                `bun:"codigo_upstream"`
	MensajeUpstream  string              `bun:"mensaje_upstream,nullzero"`
	SolicitadoPor    string              `bun:"solicitado_por,nullzero"`
	RequestID        string              `bun:"request_id,nullzero"`

	MotivoReverso           string              `bun:"motivo_reverso,nullzero"`
	FacturasRevertidas      []Factura           `bun:"facturas_revertidas,type:json"`
	RubrosRevertidos        []Rubro             `bun:"rubros_revertidos,type:json"`
	ReversoSolicitadoPor    string              `bun:"reverso_solicitado_por,nullzero"`
	ReversoRequestID        string              `bun:"reverso_request_id,nullzero"`
	PagoContadoAntesReverso decimal.NullDecimal `bun:"pago_contado_antes_reverso"`

	// OperacionEnCurso is UpstreamGrabarReverso while a reversal holds the payment; with
	// ResultadoDesconocido the reversal did not answer in time.
	OperacionEnCurso     string    `bun:"operacion_en_curso,nullzero"`
	OperacionIniciadaAt  time.Time `bun:"operacion_iniciada_at,nullzero"`
	ResultadoDesconocido bool      `bun:"resultado_desconocido,notnull"`
	// Conciliacion is the evidence of a debt query that settled an unknown outcome.
	Conciliacion *Conciliacion `bun:"conciliacion,type:json"`

	CreatedAt   time.Time `bun:"created_at,notnull"`
	UpdatedAt   time.Time `bun:"updated_at,notnull"`
	AplicadoAt  time.Time `bun:"aplicado_at,nullzero"`
	ReversadoAt time.Time `bun:"reversado_at,nullzero"`
}

// FormaPago is one payment method: cash (FormaEfectivo) carries no bank fields, a cheque
// (FormaCheque) all five.
type FormaPago struct {
	Codigo                  string          `json:"codigo"`
	Valor                   decimal.Decimal `json:"valor"`
	InstitucionFinanciera   string          `json:"institucionFinanciera,omitempty"`
	NumeroDocumento         string          `json:"numeroDocumento,omitempty"`
	NumeroCuenta            string          `json:"numeroCuenta,omitempty"`
	IdentCuentaCorrentista  string          `json:"identCuentaCorrentista,omitempty"`
	NombreCuentaCorrentista string          `json:"nombreCuentaCorrentista,omitempty"`
}

// Codes of the payment methods.
const (
	FormaEfectivo = "001"
	FormaCheque   = "002"
)

// Factura is an invoice a payment or its reversal touched.
type Factura struct {
	NumeroFactura string          `json:"numeroFactura"`
	Valor         decimal.Decimal `json:"valor"`
}

// Rubro is a concept a payment was applied to (negative for the early-payment discount).
type Rubro struct {
	Codigo        string          `json:"codigo"`
	TipoDocumento string          `json:"tipoDocumento"`
	Valor         decimal.Decimal `json:"valor"`
}

// Cupo is a credit line as the payment left it.
type Cupo struct {
	Codigo      string              `json:"codigo"`
	Descripcion string              `json:"descripcion"`
	Asignado    decimal.NullDecimal `json:"asignado"`
	Disponible  decimal.NullDecimal `json:"disponible"`
	Utilizado   decimal.NullDecimal `json:"utilizado"`
}

// Conciliacion is what a debt query showed about an operation whose outcome was unknown.
type Conciliacion struct {
	Operacion          string          `json:"operacion"` // UpstreamGrabarPago or UpstreamGrabarReverso
	Aplicada           bool            `json:"aplicada"`
	PagoContadoAntes   decimal.Decimal `json:"pagoContadoAntes"`
	PagoContadoDespues decimal.Decimal `json:"pagoContadoDespues"`
	ConsultaIniciadaAt time.Time       `json:"consultaIniciadaAt"`
	RequestID          string          `json:"requestId,omitempty"`
}

// Abierto reports whether the payment blocks new payments of its card: a payment or a reversal
// in flight or with an unknown outcome.
func (p *Pago) Abierto() bool {
	return p.Estado == EstadoPendiente || p.Estado == EstadoDesconocido || p.OperacionEnCurso != ""
}

// Desconocido reports whether the payment, or its reversal, waits for a debt query: it timed out,
// or its call started before staleBefore and never ended (the process stopped during it).
func (p *Pago) Desconocido(staleBefore time.Time) bool {
	switch {
	case p.Estado == EstadoDesconocido:
		return true
	case p.Estado == EstadoPendiente:
		return p.PagoContadoAntes.Valid && p.UpdatedAt.Before(staleBefore)
	case p.OperacionEnCurso != "":
		return p.ResultadoDesconocido || (p.PagoContadoAntesReverso.Valid && p.OperacionIniciadaAt.Before(staleBefore))
	}
	return false
}

// IniciarReverso holds an applied payment for its reversal. A payment already held is a
// *ConflictError (outcome unknown when it waits for a debt query, judged with staleBefore).
func (p *Pago) IniciarReverso(motivo, por, requestID string, now, staleBefore time.Time) error {
	switch {
	case p.Abierto():
		return &ConflictError{Pago: p, Desconocido: p.Desconocido(staleBefore)}
	case p.Estado != EstadoAplicado:
		return &StateError{Pago: p, Operacion: "reverso"}
	}
	p.OperacionEnCurso, p.OperacionIniciadaAt = UpstreamGrabarReverso, now
	p.MotivoReverso, p.ReversoSolicitadoPor, p.ReversoRequestID = motivo, por, requestID
	p.PagoContadoAntesReverso = decimal.NullDecimal{}
	p.UpdatedAt = now
	return nil
}

// Reversar completes a reversal with the creditsystem's answer.
func (p *Pago) Reversar(facturas []Factura, rubros []Rubro, now time.Time) {
	p.Estado = EstadoReversado
	p.FacturasRevertidas, p.RubrosRevertidos = facturas, rubros
	p.liberar(now)
	p.ReversadoAt = now
}

// liberar drops the reversal's hold.
func (p *Pago) liberar(now time.Time) {
	p.OperacionEnCurso, p.OperacionIniciadaAt, p.ResultadoDesconocido = "", time.Time{}, false
	p.UpdatedAt = now
}

func jsonOf(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}
