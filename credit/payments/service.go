package payments

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/upstream"
)

// Creditsystem is what the payments module calls; *creditsystem.Client implements it.
type Creditsystem interface {
	ConsultarDeudaTarjeta(ctx context.Context, req creditsystem.ConsultarDeudaTarjetaRequest) (*creditsystem.ConsultarDeudaTarjetaResponse, error)
	GrabarPagoTarjeta(ctx context.Context, req creditsystem.GrabarPagoTarjetaRequest) (*creditsystem.GrabarPagoTarjetaResponse, error)
	GrabarReversoPagoTarjeta(ctx context.Context, req creditsystem.GrabarReversoPagoTarjetaRequest) (*creditsystem.GrabarReversoPagoTarjetaResponse, error)
}

// DefaultOutcomeWriteTimeout bounds the writes that record an upstream's outcome, which run
// even when the caller went away.
const DefaultOutcomeWriteTimeout = 10 * time.Second

// DefaultStaleAfter is how long a call may hold a payment before it counts as dead (the process
// stopped during it): the default creditsystem timeout and a margin. See WithCallTimeout.
const DefaultStaleAfter = 45 * time.Second

// Service is the payments module's use cases (see the package documentation).
type Service struct {
	store      *Store
	cs         Creditsystem
	erp        ERP
	now        func() time.Time
	log        *slog.Logger
	staleAfter time.Duration
}

// Option configures a Service.
type Option func(*Service) error

// WithClock replaces the clock (tests).
func WithClock(now func() time.Time) Option {
	return func(s *Service) error {
		if now == nil {
			return errors.New("payments: WithClock(nil)")
		}
		s.now = now
		return nil
	}
}

// WithLogger sets the logger of unknown outcomes and hand-over failures (default: none).
func WithLogger(l *slog.Logger) Option {
	return func(s *Service) error {
		if l == nil {
			return errors.New("payments: WithLogger(nil)")
		}
		s.log = l
		return nil
	}
}

// WithCallTimeout tells the service the creditsystem timeout (CREDITSYSTEM_TIMEOUT): a payment
// held longer than it plus 15 s by a call that never ended counts as an unknown outcome.
func WithCallTimeout(d time.Duration) Option {
	return func(s *Service) error {
		if d <= 0 {
			return fmt.Errorf("payments: WithCallTimeout(%s): must be positive", d)
		}
		s.staleAfter = d + 15*time.Second
		return nil
	}
}

// WithERP sets the ERP the hand-overs go to (Entregar); without it the jobs fail and are
// retried.
func WithERP(e ERP) Option {
	return func(s *Service) error {
		if e == nil {
			return errors.New("payments: WithERP(nil)")
		}
		s.erp = e
		return nil
	}
}

// NewService returns the payments module on store calling cs.
func NewService(store *Store, cs Creditsystem, opts ...Option) (*Service, error) {
	if store == nil || cs == nil {
		return nil, errors.New("payments: NewService needs a store and a creditsystem")
	}
	s := &Service{store: store, cs: cs, now: time.Now, log: slog.New(slog.DiscardHandler), staleAfter: DefaultStaleAfter}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Service) staleBefore() time.Time { return s.now().Add(-s.staleAfter) }

// outcomeContext is the context of the writes after an upstream call: detached from the caller,
// bounded by DefaultOutcomeWriteTimeout.
func (s *Service) outcomeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), DefaultOutcomeWriteTimeout)
}

// Deuda is the answer of a debt query and the records of the card it settled.
type Deuda struct {
	*creditsystem.ConsultarDeudaTarjetaResponse
	Conciliados []Pago
}

// ConsultarDeuda asks for a card's debt (ConsultarDeudaTarjeta). When a payment or reversal of
// the card waits for a debt query (its outcome is unknown), a query that started after the
// outcome became unknown settles it: a payment is applied when pagoContado is now below the one
// read before it was sent, a reversal when it is above; the evidence is kept on the record.
func (s *Service) ConsultarDeuda(ctx context.Context, in DeudaInput) (*Deuda, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	started := s.now()
	res, err := s.cs.ConsultarDeudaTarjeta(ctx, creditsystem.ConsultarDeudaTarjetaRequest{
		NumeroTarjeta: in.NumeroTarjeta, NumeroIdentificacion: in.NumeroIdentificacion,
	})
	if err != nil {
		return nil, err
	}
	card := in.NumeroTarjeta
	if card == "" && res.NumeroTarjeta != nil {
		card = *res.NumeroTarjeta
	}
	d := &Deuda{ConsultarDeudaTarjetaResponse: res}
	if card == "" || res.PagoContado == nil {
		return d, nil
	}
	d.Conciliados, err = s.conciliar(ctx, card, *res.PagoContado, started, in.RequestID)
	return d, err
}

func (s *Service) conciliar(ctx context.Context, card string, despues decimal.Decimal, started time.Time, requestID string) ([]Pago, error) {
	open, err := s.store.Abiertos(ctx, card)
	if err != nil {
		return nil, err
	}
	var settled []Pago
	for _, p := range open {
		stale := s.staleBefore()
		if !p.Desconocido(stale) || !unknownBefore(&p, started, s.staleAfter) {
			continue
		}
		rec, err := s.store.Update(ctx, p.ID, stale, func(cur *Pago) (Change, error) {
			if !cur.Desconocido(stale) || !unknownBefore(cur, started, s.staleAfter) {
				return Change{}, nil
			}
			now := s.now()
			ev := &Conciliacion{PagoContadoDespues: despues, ConsultaIniciadaAt: started.UTC(), RequestID: requestID}
			cur.Conciliacion = ev
			cur.UpdatedAt = now
			if cur.OperacionEnCurso == "" {
				// A payment: applied when the cash amount fell since it was read.
				ev.Operacion, ev.PagoContadoAntes = UpstreamGrabarPago, cur.PagoContadoAntes.Decimal
				ev.Aplicada = despues.LessThan(ev.PagoContadoAntes)
				if !ev.Aplicada {
					cur.Estado = EstadoNoAplicado
					return Change{Save: true}, nil
				}
				cur.Estado, cur.AplicadoAt = EstadoAplicado, now
				return Change{Save: true, HandOverBlocked: "the payment was found applied by a debt query and the creditsystem never gave its operation number: issue the receipt by hand"}, nil
			}
			// A reversal: applied when the cash amount rose since it was read. The reversal
			// undoes the whole payment, so its invoices and rubros are the payment's.
			ev.Operacion, ev.PagoContadoAntes = UpstreamGrabarReverso, cur.PagoContadoAntesReverso.Decimal
			ev.Aplicada = despues.GreaterThan(ev.PagoContadoAntes)
			if !ev.Aplicada {
				cur.liberar(now)
				return Change{Save: true}, nil
			}
			cur.Reversar(cur.FacturasAfectadas, cur.RubrosAplicados, now)
			return Change{Save: true, HandOver: EventoReverso}, nil
		})
		if err != nil {
			return settled, err
		}
		if rec.Conciliacion != nil && rec.Conciliacion.ConsultaIniciadaAt.Equal(started.UTC()) {
			s.log.WarnContext(ctx, "payments: an unknown outcome was settled by a debt query", "pago_id", rec.ID,
				"operation", rec.Conciliacion.Operacion, "applied", rec.Conciliacion.Aplicada,
				"pago_contado_antes", rec.Conciliacion.PagoContadoAntes.String(), "pago_contado_despues", despues.String())
			settled = append(settled, *rec)
		}
	}
	return settled, nil
}

// unknownBefore reports whether p's outcome was already unknown when a debt query started at
// started: the query must not have been answered before the call it judges ended.
func unknownBefore(p *Pago, started time.Time, staleAfter time.Duration) bool {
	since := p.UpdatedAt
	switch {
	case p.Estado == EstadoPendiente:
		since = p.UpdatedAt.Add(staleAfter)
	case p.OperacionEnCurso != "" && !p.ResultadoDesconocido:
		since = p.OperacionIniciadaAt.Add(staleAfter)
	}
	return started.After(since)
}

// RecordedError is an error that left a record in the ledger: the answer names it.
type RecordedError struct {
	Pago *Pago
	Err  error
}

func (e *RecordedError) Error() string { return e.Err.Error() }
func (e *RecordedError) Unwrap() error { return e.Err }

// Aplicar applies a payment (GrabarPagoTarjeta). The request's shape and rules 2 and 3 are
// checked first; then the payment is recorded PENDIENTE, which holds the card (a second payment
// of the card meanwhile is a *ConflictError), the debt is read for rule 1, and the payment is
// sent. A refusal before the call leaves nothing; after it the record ends APLICADO (with the
// ERP hand-over enqueued in the same transaction), RECHAZADO or DESCONOCIDO, and an error
// carries the record (*RecordedError).
func (s *Service) Aplicar(ctx context.Context, in PagoInput) (*Pago, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if err := in.Rules(); err != nil {
		return nil, err
	}
	now := s.now()
	p := &Pago{
		NumeroTarjeta: in.NumeroTarjeta, Estado: EstadoPendiente, ValorPago: in.ValorPago,
		FechaPago: in.FechaPago.String(), FormasPago: in.FormasPago,
		SolicitadoPor: in.SolicitadoPor, RequestID: in.RequestID, CreatedAt: now, UpdatedAt: now,
	}
	if err := s.store.Open(ctx, p, s.staleBefore()); err != nil {
		return nil, err
	}
	refuse := func(cause error) (*Pago, error) {
		wctx, cancel := s.outcomeContext(ctx)
		defer cancel()
		if err := storage.RetryWrite(wctx, func(ctx context.Context) error { return s.store.Discard(ctx, p.ID) }); err != nil {
			return nil, errors.Join(cause, err)
		}
		return nil, cause
	}
	deuda, err := s.cs.ConsultarDeudaTarjeta(ctx, creditsystem.ConsultarDeudaTarjetaRequest{NumeroTarjeta: in.NumeroTarjeta})
	if err != nil {
		return refuse(err)
	}
	if deuda.PagoContado == nil || !deuda.PagoContado.IsPositive() {
		return refuse(&RuleError{Rules: []string{fmt.Sprintf("card %s has no debt to pay (pagoContado is 0)", in.NumeroTarjeta)}})
	}
	if contado := *deuda.PagoContado; in.ValorPago.GreaterThan(contado) {
		return refuse(&RuleError{Rules: []string{fmt.Sprintf("valorPago %s is above the cash amount of the debt (pagoContado %s)",
			in.ValorPago.StringFixed(2), contado.StringFixed(2))}})
	}
	if err := ctx.Err(); err != nil {
		return refuse(err)
	}
	// From here the payment may be sent: the reading it is judged against is recorded first.
	marked, err := s.store.Update(ctx, p.ID, s.staleBefore(), func(cur *Pago) (Change, error) {
		cur.PagoContadoAntes = decimal.NewNullDecimal(*deuda.PagoContado)
		return Change{Save: true}, nil
	})
	if err != nil {
		return refuse(err)
	}
	p = marked
	req := creditsystem.GrabarPagoTarjetaRequest{NumeroTarjeta: in.NumeroTarjeta, ValorPago: in.ValorPago, FechaPago: in.FechaPago}
	for _, f := range in.FormasPago {
		req.FormasPago = append(req.FormasPago, creditsystem.FormaPago{
			Codigo: f.Codigo, Valor: f.Valor, InstitucionFinanciera: f.InstitucionFinanciera,
			NumeroDocumento: f.NumeroDocumento, NumeroCuenta: f.NumeroCuenta,
			IdentCuentaCorrentista: f.IdentCuentaCorrentista, NombreCuentaCorrentista: f.NombreCuentaCorrentista,
		})
	}
	// The call runs to its own deadline (CREDITSYSTEM_TIMEOUT), whatever happens to the request.
	res, callErr := s.cs.GrabarPagoTarjeta(context.WithoutCancel(ctx), req)
	if callErr == nil && (res.NumeroOperacion == nil || *res.NumeroOperacion <= 0) {
		callErr = &creditsystem.TransportError{Op: UpstreamGrabarPago, HTTPStatus: 200,
			Err: errors.New("answer accepted the payment without nNumeroOperacion")}
	}
	wctx, cancel := s.outcomeContext(ctx)
	defer cancel()
	var rec *Pago
	err = storage.RetryWrite(wctx, func(wctx context.Context) (err error) {
		rec, err = s.store.Update(wctx, p.ID, s.staleBefore(), func(cur *Pago) (Change, error) {
			if cur.Estado != EstadoPendiente {
				return Change{}, nil // settled meanwhile by a debt query
			}
			now := s.now()
			cur.UpdatedAt = now
			if callErr != nil {
				cur.Estado = EstadoRechazado
				if applied(callErr) {
					cur.Estado = EstadoDesconocido
				}
				cur.CodigoUpstream, cur.MensajeUpstream = upstreamCode(callErr), callErr.Error()
				return Change{Save: true}, nil
			}
			cur.Estado, cur.AplicadoAt, cur.NumeroOperacion = EstadoAplicado, now, res.NumeroOperacion
			cur.FacturasAfectadas, cur.RubrosAplicados, cur.Cupos = facturas(res.FacturasAfectadas), rubros(res.RubrosAplicados), cupos(res.Cupos)
			return Change{Save: true, HandOver: EventoPago}, nil
		})
		return err
	})
	switch {
	case err != nil && callErr == nil:
		s.log.ErrorContext(ctx, "payments: the creditsystem applied a payment that could not be recorded",
			"pago_id", p.ID, "numero_operacion", *res.NumeroOperacion, "error", err)
		return nil, &UnrecordedError{PagoID: p.ID, NumeroOperacion: res.NumeroOperacion, Operacion: UpstreamGrabarPago, Err: err}
	case err != nil:
		return nil, &RecordedError{Pago: p, Err: errors.Join(callErr, err)}
	case callErr == nil && rec.Estado != EstadoAplicado:
		// A debt query judged the payment while its answer was on the way: the ledger keeps the
		// query's verdict, and the answer names the record for an operator.
		s.log.ErrorContext(ctx, "payments: an applied payment's answer came after a debt query settled it",
			"pago_id", rec.ID, "estado", rec.Estado, "numero_operacion", *res.NumeroOperacion)
		return nil, &UnrecordedError{PagoID: rec.ID, NumeroOperacion: res.NumeroOperacion, Operacion: UpstreamGrabarPago,
			Err: fmt.Errorf("payments: payment %d was settled as %s before its answer came", rec.ID, rec.Estado)}
	case callErr != nil:
		if rec.Estado == EstadoDesconocido {
			s.log.WarnContext(ctx, "payments: payment outcome unknown: not retried; a debt query of the card settles it",
				"pago_id", rec.ID, "numero_tarjeta", rec.NumeroTarjeta, "valor_pago", rec.ValorPago.String(), "error", callErr)
		}
		return rec, &RecordedError{Pago: rec, Err: callErr}
	}
	return rec, nil
}

// Reversar reverses an applied payment (GrabarReversoPagoTarjeta) by its operation number. The
// payment is held for the reversal (a second operation meanwhile is a *ConflictError), the debt
// is read as evidence, and the reversal is sent: REVERSADO with the reversed invoices and rubros
// (and the ERP hand-over), back to APLICADO when refused, or held with an unknown outcome after
// a timeout until a debt query settles it.
func (s *Service) Reversar(ctx context.Context, in ReversoInput) (*Pago, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	p, err := s.store.UpdateByNumeroOperacion(ctx, in.NumeroOperacion, s.staleBefore(), func(cur *Pago) (Change, error) {
		return Change{Save: true}, cur.IniciarReverso(in.Motivo, in.SolicitadoPor, in.RequestID, s.now(), s.staleBefore())
	})
	if err != nil {
		return nil, err
	}
	release := func(cause error) (*Pago, error) {
		wctx, cancel := s.outcomeContext(ctx)
		defer cancel()
		err := storage.RetryWrite(wctx, func(wctx context.Context) error {
			_, err := s.store.Update(wctx, p.ID, s.staleBefore(), func(cur *Pago) (Change, error) {
				if cur.OperacionEnCurso != UpstreamGrabarReverso || cur.ResultadoDesconocido {
					return Change{}, nil
				}
				cur.liberar(s.now())
				return Change{Save: true}, nil
			})
			return err
		})
		if err != nil {
			return nil, errors.Join(cause, err)
		}
		return nil, cause
	}
	deuda, err := s.cs.ConsultarDeudaTarjeta(ctx, creditsystem.ConsultarDeudaTarjetaRequest{NumeroTarjeta: p.NumeroTarjeta})
	if err != nil {
		return release(err)
	}
	if deuda.PagoContado == nil {
		return release(fmt.Errorf("payments: the debt of card %s came without pagoContado", p.NumeroTarjeta))
	}
	if err := ctx.Err(); err != nil {
		return release(err)
	}
	marked, err := s.store.Update(ctx, p.ID, s.staleBefore(), func(cur *Pago) (Change, error) {
		cur.PagoContadoAntesReverso = decimal.NewNullDecimal(*deuda.PagoContado)
		return Change{Save: true}, nil
	})
	if err != nil {
		return release(err)
	}
	p = marked
	res, callErr := s.cs.GrabarReversoPagoTarjeta(context.WithoutCancel(ctx), creditsystem.GrabarReversoPagoTarjetaRequest{
		NumeroOperacion: in.NumeroOperacion, MotivoReverso: in.Motivo,
	})
	wctx, cancel := s.outcomeContext(ctx)
	defer cancel()
	var rec *Pago
	err = storage.RetryWrite(wctx, func(wctx context.Context) (err error) {
		rec, err = s.store.Update(wctx, p.ID, s.staleBefore(), func(cur *Pago) (Change, error) {
			if cur.OperacionEnCurso != UpstreamGrabarReverso {
				return Change{}, nil // settled meanwhile by a debt query
			}
			now := s.now()
			switch {
			case callErr == nil:
				cur.Reversar(facturas(res.FacturasAfectadas), rubros(res.RubrosRevertidos), now)
				return Change{Save: true, HandOver: EventoReverso}, nil
			case applied(callErr):
				cur.ResultadoDesconocido, cur.UpdatedAt = true, now
			default:
				cur.liberar(now)
			}
			return Change{Save: true}, nil
		})
		return err
	})
	switch {
	case err != nil && callErr == nil:
		s.log.ErrorContext(ctx, "payments: the creditsystem reversed a payment that could not be recorded",
			"pago_id", p.ID, "numero_operacion", in.NumeroOperacion, "error", err)
		return nil, &UnrecordedError{PagoID: p.ID, NumeroOperacion: p.NumeroOperacion, Operacion: UpstreamGrabarReverso, Err: err}
	case err != nil:
		return nil, &RecordedError{Pago: p, Err: errors.Join(callErr, err)}
	case callErr == nil && rec.Estado != EstadoReversado:
		s.log.ErrorContext(ctx, "payments: a reversal's answer came after a debt query settled it",
			"pago_id", rec.ID, "numero_operacion", in.NumeroOperacion)
		return nil, &UnrecordedError{PagoID: rec.ID, NumeroOperacion: rec.NumeroOperacion, Operacion: UpstreamGrabarReverso,
			Err: fmt.Errorf("payments: the reversal of payment %d was settled before its answer came", in.NumeroOperacion)}
	case callErr != nil:
		if rec.ResultadoDesconocido {
			s.log.WarnContext(ctx, "payments: reversal outcome unknown: not retried; a debt query of the card settles it",
				"pago_id", rec.ID, "numero_operacion", in.NumeroOperacion, "error", callErr)
		}
		return rec, &RecordedError{Pago: rec, Err: callErr}
	}
	return rec, nil
}

// Pago returns the payment with the creditsystem's operation number and its ERP hand-overs.
func (s *Service) Pago(ctx context.Context, numeroOperacion int64) (*Pago, []Entrega, error) {
	p, err := s.store.ByNumeroOperacion(ctx, numeroOperacion)
	if err != nil {
		return nil, nil, err
	}
	e, err := s.store.Entregas(ctx, p.ID)
	if err != nil {
		return nil, nil, err
	}
	return p, e[p.ID], nil
}

// Page is one page of the ledger.
type Page struct {
	Pagos       []Pago
	Entregas    map[int64][]Entrega // by payment id
	TotalCount  int
	TotalPages  int
	CurrentPage int
	PerPage     int
}

// Pagos returns a page of the ledger, newest first; page and per_page are clamped like the
// client list's (1.., 1..MaxPerPage, default DefaultPerPage).
func (s *Service) Pagos(ctx context.Context, q ListQuery) (*Page, error) {
	q.Page = max(q.Page, 1)
	switch {
	case q.PerPage == 0:
		q.PerPage = DefaultPerPage
	case q.PerPage < 1:
		q.PerPage = 1
	case q.PerPage > MaxPerPage:
		q.PerPage = MaxPerPage
	}
	list, total, err := s.store.List(ctx, q)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(list))
	for i := range list {
		ids[i] = list[i].ID
	}
	e, err := s.store.Entregas(ctx, ids...)
	if err != nil {
		return nil, err
	}
	return &Page{Pagos: list, Entregas: e, TotalCount: total, TotalPages: (total + q.PerPage - 1) / q.PerPage,
		CurrentPage: q.Page, PerPage: q.PerPage}, nil
}

// Desconocido reports whether p waits for a debt query, as of now.
func (s *Service) Desconocido(p *Pago) bool { return p.Desconocido(s.staleBefore()) }

// Pendientes counts what needs attention, for the service's metrics: payments and reversals
// whose outcome is unknown, and ERP hand-overs failing or given up.
func (s *Service) Pendientes(ctx context.Context) (unknown, handOvers int, err error) {
	return s.store.Pendientes(ctx, s.staleBefore())
}

// applied reports whether a failed call may have been applied: its outcome is unknown.
func applied(err error) bool { return upstream.KindOf(err) == upstream.OutcomeUnknown }

func upstreamCode(err error) *int {
	var ce *creditsystem.Error
	if errors.As(err, &ce) {
		c := ce.Code
		return &c
	}
	return nil
}

func text(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func amount(p *decimal.Decimal) decimal.Decimal {
	if p == nil {
		return decimal.Zero
	}
	return *p
}

func facturas(in []creditsystem.FacturaAfectada) []Factura {
	out := make([]Factura, 0, len(in))
	for _, f := range in {
		out = append(out, Factura{NumeroFactura: text(f.NumeroFactura), Valor: amount(f.Valor)})
	}
	return out
}

func rubros(in []creditsystem.Rubro) []Rubro {
	out := make([]Rubro, 0, len(in))
	for _, r := range in {
		out = append(out, Rubro{Codigo: text(r.Codigo), TipoDocumento: text(r.TipoDocumento), Valor: amount(r.Valor)})
	}
	return out
}

func nullable(p *decimal.Decimal) decimal.NullDecimal {
	if p == nil {
		return decimal.NullDecimal{}
	}
	return decimal.NewNullDecimal(*p)
}

func cupos(in []creditsystem.Cupo) []Cupo {
	out := make([]Cupo, 0, len(in))
	for _, c := range in {
		out = append(out, Cupo{Codigo: text(c.CodigoTipoCupo), Descripcion: text(c.DescripcionTipoCupo),
			Asignado: nullable(c.CupoAsignado), Disponible: nullable(c.CupoDisponible), Utilizado: nullable(c.CupoUtilizado)})
	}
	return out
}
