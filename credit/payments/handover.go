package payments

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/erp"
)

// Events handed over to the ERP (rule 8): a payment (a receipt) or its reversal (a credit note).
const (
	EventoPago    = string(erp.PaymentApplied)
	EventoReverso = string(erp.PaymentReversed)
)

// States of an ERP hand-over. A hand-over is pending until the ERP answers; failing after a
// failed attempt (retried with backoff); delivered with the ERP's document number; failed when
// the retries are spent or it cannot be sent (a payment found applied by a debt query has no
// operation number): a person finishes it.
const (
	EntregaPendiente = "pending"
	EntregaFallando  = "failing"
	EntregaEntregada = "delivered"
	EntregaFallida   = "failed"
)

// Entrega is the hand-over of one event of a payment to the ERP.
type Entrega struct {
	bun.BaseModel `bun:"table:pago_entregas"`

	ID              int64           `bun:"id,pk,autoincrement"`
	PagoID          int64           `bun:"pago_id,notnull"`
	Evento          string          `bun:"evento,notnull"`
	Estado          string          `bun:"estado,notnull"`
	Intentos        int             `bun:"intentos,notnull"`
	UltimoError     string          `bun:"ultimo_error,nullzero"`
	NumeroDocumento string          `bun:"numero_documento,nullzero"`
	Respuesta       json.RawMessage `bun:"respuesta,type:json"`
	CreatedAt       time.Time       `bun:"created_at,notnull"`
	UpdatedAt       time.Time       `bun:"updated_at,notnull"`
	EntregadoAt     time.Time       `bun:"entregado_at,nullzero"`
}

// HandOverQueue is the River queue of the ERP hand-overs.
const HandOverQueue = "credit-erp"

// HandOverArgs is the job that hands one event over to the ERP.
type HandOverArgs struct {
	EntregaID int64 `json:"entrega_id"`
}

// Kind is the job kind.
func (HandOverArgs) Kind() string { return "credit-payment-handover" }

// InsertOpts puts the job on HandOverQueue.
func (HandOverArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: HandOverQueue} }

// AddHandOverWorker registers the hand-over worker of s on workers.
func AddHandOverWorker(workers *river.Workers, s *Service) error {
	return river.AddWorkerSafely(workers, &handOverWorker{s: s})
}

type handOverWorker struct {
	river.WorkerDefaults[HandOverArgs]
	s *Service
}

func (w *handOverWorker) Work(ctx context.Context, job *river.Job[HandOverArgs]) error {
	return w.s.Entregar(ctx, job.Args.EntregaID, job.Attempt >= job.MaxAttempts)
}

// ERP is what the hand-over calls; *erp.Client implements it.
type ERP interface {
	HandOverPayment(ctx context.Context, h erp.PaymentHandOver) (*erp.PaymentHandOverResult, error)
}

// Entregar runs one attempt of a hand-over: nothing when it was delivered already; otherwise the
// event goes to the ERP (idempotent there by event and operation number) and the answer, or the
// error, is written on the hand-over. last says the queue will not try again: a failure then
// leaves the hand-over failed, for a person.
func (s *Service) Entregar(ctx context.Context, entregaID int64, last bool) error {
	e, p, err := s.store.Entrega(ctx, entregaID)
	if err != nil {
		return err
	}
	if e.Estado == EntregaEntregada || e.Estado == EntregaFallida {
		return nil
	}
	if s.erp == nil {
		return fmt.Errorf("payments: no ERP configured for hand-over %d", e.ID)
	}
	h := erp.PaymentHandOver{
		Event: erp.PaymentEvent(e.Evento), NumeroTarjeta: p.NumeroTarjeta,
		ValorPago: p.ValorPago, FechaPago: p.FechaPago,
	}
	if p.NumeroOperacion != nil {
		h.NumeroOperacion = *p.NumeroOperacion
	}
	facturas, rubros := p.FacturasAfectadas, p.RubrosAplicados
	if e.Evento == EventoReverso {
		facturas, rubros, h.Motivo = p.FacturasRevertidas, p.RubrosRevertidos, p.MotivoReverso
	}
	for _, f := range facturas {
		h.Facturas = append(h.Facturas, erp.PaymentInvoice{NumeroFactura: f.NumeroFactura, Valor: f.Valor})
	}
	for _, r := range rubros {
		h.Rubros = append(h.Rubros, erp.PaymentRubro{Codigo: r.Codigo, TipoDocumento: r.TipoDocumento, Valor: r.Valor})
	}
	res, callErr := s.erp.HandOverPayment(ctx, h)
	now := s.now()
	e.Intentos++
	e.UpdatedAt = now
	if callErr == nil {
		e.Estado, e.NumeroDocumento, e.Respuesta, e.UltimoError, e.EntregadoAt = EntregaEntregada, res.NumeroDocumento, res.Raw, "", now
	} else {
		e.Estado, e.UltimoError = EntregaFallando, callErr.Error()
		if last {
			e.Estado = EntregaFallida
		}
	}
	if err := s.store.UpdateEntrega(ctx, e); err != nil {
		if callErr != nil {
			return fmt.Errorf("%w (and it could not be recorded: %v)", callErr, err)
		}
		return err
	}
	if callErr != nil {
		s.log.WarnContext(ctx, "payments: ERP hand-over failed", "entrega_id", e.ID, "pago_id", p.ID, "event", e.Evento,
			"attempt", e.Intentos, "final", last, "error", callErr)
	}
	return callErr
}

// Reenviar sends a failed hand-over again (an operator's decision, once the ERP is back): it
// becomes pending with a new job. A failing one is still retried by the queue. A payment without an operation number cannot be
// handed over: its document is issued by hand and recorded with Cerrar.
func (s *Service) Reenviar(ctx context.Context, entregaID int64) (*Entrega, error) {
	return s.store.ChangeEntrega(ctx, entregaID, func(e *Entrega, p *Pago) (bool, error) {
		if e.Estado != EntregaFallida || p.NumeroOperacion == nil {
			return false, fmt.Errorf("%w: hand-over %d is %s (payment operation number known: %t)", ErrEntregaState, e.ID, e.Estado, p.NumeroOperacion != nil)
		}
		e.Estado, e.UpdatedAt = EntregaPendiente, s.now()
		return true, nil
	})
}

// Cerrar records the document a person issued in the ERP by hand for a hand-over that was not
// delivered: it becomes delivered with that document number.
func (s *Service) Cerrar(ctx context.Context, entregaID int64, documento string) (*Entrega, error) {
	if strings.TrimSpace(documento) == "" {
		return nil, fmt.Errorf("%w: the document number is required", ErrEntregaState)
	}
	return s.store.ChangeEntrega(ctx, entregaID, func(e *Entrega, _ *Pago) (bool, error) {
		if e.Estado == EntregaEntregada {
			return false, fmt.Errorf("%w: hand-over %d was delivered already (%s)", ErrEntregaState, e.ID, e.NumeroDocumento)
		}
		now := s.now()
		e.Estado, e.NumeroDocumento, e.EntregadoAt, e.UpdatedAt = EntregaEntregada, documento, now, now
		e.Respuesta = jsonOf(map[string]any{"cerrada_a_mano": true})
		return false, nil
	})
}
