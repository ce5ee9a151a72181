package erp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/upstream"
)

// OpHandOverPayment is the operation name of HandOverPayment (see OpLookupClient).
const OpHandOverPayment = "HandOverPayment"

// DefaultPaymentsPath is the ERP endpoint that receives the payments hand-over. The
// specification does not give it, so it is configurable (ERP_PAYMENTS_PATH).
const DefaultPaymentsPath = "/erpapi/pagos"

// PaymentEvent is the `evento` of a hand-over: what happened in the creditsystem, and so which
// document the ERP issues.
type PaymentEvent string

const (
	// PaymentApplied is a payment: the ERP issues a receipt.
	PaymentApplied PaymentEvent = "pago"
	// PaymentReversed is a reversal: the ERP issues a credit note.
	PaymentReversed PaymentEvent = "reverso"
)

// PaymentInvoice is an invoice the payment or reversal affected (facturasAfectadas).
type PaymentInvoice struct {
	NumeroFactura string // required
	Valor         decimal.Decimal
}

// PaymentRubro is a rubro applied by a payment (rubrosAplicados) or reversed (rubrosRevertidos).
// Valor may be negative: the early-payment discount.
type PaymentRubro struct {
	Codigo        string // required
	TipoDocumento string
	Valor         decimal.Decimal
}

// PaymentHandOver is what the credit service passes to the ERP after a payment is applied or
// reversed in the creditsystem (the specification's payment rule 8). Amounts have at most 2
// decimals; they are sent with exactly 2.
type PaymentHandOver struct {
	Event PaymentEvent // PaymentApplied or PaymentReversed
	// NumeroOperacion is the creditsystem's operation number of the payment (for a reversal:
	// of the payment reversed); > 0. With Event it identifies the hand-over: the ERP issues
	// one document per (Event, NumeroOperacion), so the call may be repeated.
	NumeroOperacion int64
	NumeroTarjeta   string          // required
	ValorPago       decimal.Decimal // the payment's amount, > 0
	FechaPago       string          // yyyy-mm-dd
	Facturas        []PaymentInvoice
	Rubros          []PaymentRubro // rubrosAplicados (payment) or rubrosRevertidos (reversal)
	Motivo          string         // reversal reason, optional (not sent when empty)
}

// PaymentHandOverResult is the answer of HandOverPayment.
type PaymentHandOverResult struct {
	// NumeroDocumento is the receipt or credit note number the ERP issued.
	NumeroDocumento string
	// Duplicate reports that the ERP had already received this event for this operation
	// number and answered the same document: a repeated call, not a new document.
	Duplicate bool
	// Raw is the ERP's answer as received, to be stored.
	Raw json.RawMessage
}

// The wire shape of the hand-over (see doc.go). Money is a json.RawMessage written from the
// decimal, never a float64.
type handOverRequest struct {
	Evento          PaymentEvent      `json:"evento"`
	NumeroOperacion int64             `json:"numero_operacion"`
	NumeroTarjeta   string            `json:"numero_tarjeta"`
	ValorPago       json.RawMessage   `json:"valor_pago"`
	FechaPago       string            `json:"fecha_pago"`
	Facturas        []handOverInvoice `json:"facturas"`
	Rubros          []handOverRubro   `json:"rubros"`
	Motivo          string            `json:"motivo,omitempty"`
}

type handOverInvoice struct {
	NumeroFactura string          `json:"numero_factura"`
	Valor         json.RawMessage `json:"valor"`
}

type handOverRubro struct {
	Codigo        string          `json:"codigo"`
	TipoDocumento string          `json:"tipo_documento"`
	Valor         json.RawMessage `json:"valor"`
}

type handOverAnswer struct {
	NumeroDocumento string   `json:"numero_documento"`
	Duplicado       flexBool `json:"duplicado"`
}

// HandOverPayment passes a payment or a reversal to the ERP, which issues a receipt or a credit
// note. It is idempotent by (Event, NumeroOperacion): the request carries the Idempotency-Key
// "<evento>-<numero_operacion>", and an ERP that already issued the document answers it again
// with Duplicate true. It is not retried here; a caller that got an upstream.OutcomeUnknown
// error may call it again with the same hand-over.
func (c *Client) HandOverPayment(ctx context.Context, h PaymentHandOver) (_ *PaymentHandOverResult, err error) {
	ctx, finish := upstream.StartCall(ctx)
	defer finish(&err)
	body, err := handOverBody(h)
	if err != nil {
		return nil, fmt.Errorf("erp: %s: %w", OpHandOverPayment, err)
	}
	hdr := map[string]string{"Idempotency-Key": idempotencyKey(h.Event, h.NumeroOperacion)}
	raw, status, err := c.post(ctx, OpHandOverPayment, c.cfg.PaymentsPath, body, hdr)
	if err != nil {
		return nil, err
	}
	return decodeHandOver(raw, status)
}

// idempotencyKey is the Idempotency-Key header HandOverPayment sends:
// "<evento>-<numero_operacion>" (pago-100234).
func idempotencyKey(e PaymentEvent, numeroOperacion int64) string {
	return string(e) + "-" + strconv.FormatInt(numeroOperacion, 10)
}

func decodeHandOver(raw []byte, status int) (*PaymentHandOverResult, error) {
	var a handOverAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, undecodable(OpHandOverPayment, status, err)
	}
	if strings.TrimSpace(a.NumeroDocumento) == "" {
		return nil, undecodable(OpHandOverPayment, status, fmt.Errorf("answer without numero_documento"))
	}
	return &PaymentHandOverResult{NumeroDocumento: a.NumeroDocumento, Duplicate: bool(a.Duplicado), Raw: json.RawMessage(raw)}, nil
}

// handOverBody validates h and builds the ERP payload. Every problem found is reported in one
// error wrapping ErrInvalidRequest.
func handOverBody(h PaymentHandOver) ([]byte, error) {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if h.Event != PaymentApplied && h.Event != PaymentReversed {
		bad("evento must be %q or %q, got %q", PaymentApplied, PaymentReversed, h.Event)
	}
	if h.NumeroOperacion <= 0 {
		bad("numero_operacion must be > 0, got %d", h.NumeroOperacion)
	}
	if strings.TrimSpace(h.NumeroTarjeta) == "" {
		bad("numero_tarjeta required")
	}
	if !h.ValorPago.IsPositive() {
		bad("valor_pago must be > 0, got %s", h.ValorPago)
	}
	money := func(name string, d decimal.Decimal) json.RawMessage {
		if !d.Equal(d.Truncate(2)) {
			bad("%s has more than 2 decimals: %s", name, d)
		}
		return json.RawMessage(d.StringFixed(2))
	}
	if d, err := time.Parse(time.DateOnly, h.FechaPago); err != nil || d.Format(time.DateOnly) != h.FechaPago {
		bad("fecha_pago must be a yyyy-mm-dd date, got %q", h.FechaPago)
	}
	req := handOverRequest{
		Evento:          h.Event,
		NumeroOperacion: h.NumeroOperacion,
		NumeroTarjeta:   h.NumeroTarjeta,
		ValorPago:       money("valor_pago", h.ValorPago),
		FechaPago:       h.FechaPago,
		Facturas:        make([]handOverInvoice, 0, len(h.Facturas)),
		Rubros:          make([]handOverRubro, 0, len(h.Rubros)),
		Motivo:          h.Motivo,
	}
	for i, f := range h.Facturas {
		if strings.TrimSpace(f.NumeroFactura) == "" {
			bad("facturas[%d].numero_factura required", i)
		}
		req.Facturas = append(req.Facturas, handOverInvoice{f.NumeroFactura, money(fmt.Sprintf("facturas[%d].valor", i), f.Valor)})
	}
	for i, r := range h.Rubros {
		if strings.TrimSpace(r.Codigo) == "" {
			bad("rubros[%d].codigo required", i)
		}
		req.Rubros = append(req.Rubros, handOverRubro{r.Codigo, r.TipoDocumento, money(fmt.Sprintf("rubros[%d].valor", i), r.Valor)})
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrInvalidRequest, strings.Join(problems, "; "))
	}
	return marshal(req)
}
