package credit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/creditsystem"
)

// Creditsystem is what the consumption module calls; *creditsystem.Client implements it.
type Creditsystem interface {
	ConsultarTarjeta(ctx context.Context, req creditsystem.ConsultarTarjetaRequest) (*creditsystem.ConsultarTarjetaResponse, error)
	ConsultarAlternativaFinanciacion(ctx context.Context, req creditsystem.ConsultarAlternativaFinanciacionRequest) (*creditsystem.ConsultarAlternativaFinanciacionResponse, error)
	GrabarAutorizacion(ctx context.Context, req creditsystem.GrabarAutorizacionRequest) (*creditsystem.GrabarAutorizacionResponse, error)
	GrabarConsumo(ctx context.Context, req creditsystem.GrabarConsumoRequest) (*creditsystem.GrabarConsumoResponse, error)
	GrabarReversoAutorizacion(ctx context.Context, req creditsystem.GrabarReversoAutorizacionRequest) (*creditsystem.GrabarReversoAutorizacionResponse, error)
	GrabarReversoConsumo(ctx context.Context, req creditsystem.GrabarReversoConsumoRequest) (*creditsystem.GrabarReversoConsumoResponse, error)
}

// DefaultOutcomeWriteTimeout bounds the database writes that record an upstream outcome. They
// run detached from the request's context: once the creditsystem answered, its answer is
// recorded even if the caller went away.
const DefaultOutcomeWriteTimeout = 10 * time.Second

// maxClaimRounds bounds how often a request re-reads a record whose state changed between its
// read and its compare-and-set; a round is lost only to another writer, which then holds the
// record or has moved it, so the second read nearly always decides.
const maxClaimRounds = 3

// Consumos is the consumption module: the lifecycle of a direct-credit purchase
// (authorization, OTP, confirmation, reversals) against the creditsystem, persisted in the
// consumos table ([Consumo]) with an audit of every money-moving upstream call in
// consumo_intentos ([Intento]). Build it with [NewConsumos] on a database migrated with
// [Migrations] and a *creditsystem.Client; it is safe for concurrent use and keeps no state of
// its own, so several service instances can share one database.
//
// States and transitions are those of the specification, as methods of [Consumo] that return
// sentinel errors. Where the specification is silent: /reverso is allowed from OTP_RECIBIDO (its
// rules only forbid CONSUMIDO and REVERSADO) and refused from the final CONSUMO_REVERSADO.
//
// Errors: [ErrAutorizacionNotFound] (*AutorizacionNotFoundError), [ErrInvalidState]
// (*StateError naming the authorization, its state and the operation; *NoInvoiceError also
// matches it), [ErrInFlight] and [ErrOutcomeUnknown] (*ConflictError naming the upstream
// operation that holds the record), and the creditsystem SDK's own errors passed through
// unchanged (*creditsystem.Error, *creditsystem.FaultError, *creditsystem.TransportError).
//
// Concurrency: an operation that calls the creditsystem for an existing authorization first
// commits an in-flight marker (operacion_en_curso) with a compare-and-set on the state it read
// and on the marker being empty, in a short transaction that also inserts the pending audit
// row. Only the request that set the marker calls upstream; the others get [ErrInFlight]
// (or a [StateError] once the winner moved the record). /otp is a compare-and-set of its own and
// is refused too while the marker is set. No database transaction is open during the upstream
// call. The outcome is written afterwards, with a compare-and-set on the marker, in one
// transaction with the audit row, on a context detached from the caller's (bounded by
// [DefaultOutcomeWriteTimeout]) so that an answer is recorded even if the caller went away.
//
// Timeouts come from the creditsystem client (CREDITSYSTEM_TIMEOUT); nothing is ever retried.
// An answer with lError or a SOAP fault means the creditsystem did not apply the operation: the
// marker is dropped and the state is unchanged. A refused connection (the request never left)
// is treated the same way. A timeout, or a connection lost after the request left, leaves the
// outcome unknown: the marker stays with resultado_desconocido = true, the attempt is audited
// as "timeout" or "transport", and every later operation on the authorization gets
// [ErrOutcomeUnknown] until an operator, having asked the creditsystem, calls
// [Consumos.Reconciliar]. An applied operation whose outcome could not be written is held the
// same way, its audited attempt "ok" with the answer. A timed-out authorization creates no record (the creditsystem never
// named it); its audit row carries the request id for the operator. A process that dies during
// a call leaves the marker and a "pending" audit row, which an operator settles the same way.
//
// Stored values: source_system is always PLATFORM; codigo_empresa is the caller's, while the
// creditsystem always receives the configured company code; otp is the customer's OTP
// registered at /otp. The OTP bypass code (CREDITSYSTEM_OTP_BYPASS) is never stored, logged
// or put in an error: audit summaries record only the kind of OTP sent.
type Consumos struct {
	db           *bun.DB
	cs           Creditsystem
	now          func() time.Time
	log          *slog.Logger
	writeTimeout time.Duration
}

// ConsumosOption configures Consumos.
type ConsumosOption func(*Consumos) error

// WithConsumosClock replaces the clock of the record's timestamps (tests).
func WithConsumosClock(now func() time.Time) ConsumosOption {
	return func(s *Consumos) error {
		if now == nil {
			return errors.New("credit: WithConsumosClock: nil clock")
		}
		s.now = func() time.Time { return now().UTC() }
		return nil
	}
}

// WithConsumosLogger sets the logger of unknown outcomes and unrecorded answers (default: none).
func WithConsumosLogger(l *slog.Logger) ConsumosOption {
	return func(s *Consumos) error {
		if l == nil {
			return errors.New("credit: WithConsumosLogger: nil logger")
		}
		s.log = l
		return nil
	}
}

// NewConsumos returns the consumption module on db (migrated with [Migrations]) calling cs.
func NewConsumos(db *bun.DB, cs Creditsystem, opts ...ConsumosOption) (*Consumos, error) {
	if db == nil || cs == nil {
		return nil, errors.New("credit: NewConsumos: database and creditsystem client are required")
	}
	s := &Consumos{
		db: db, cs: cs,
		now:          func() time.Time { return time.Now().UTC() },
		log:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		writeTimeout: DefaultOutcomeWriteTimeout,
	}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying the HTTP request id, stored with each audited attempt so
// that an operator can find the attempt a caller reports.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// Cupo queries a customer's credit lines (ConsultarTarjeta). Nothing is stored.
func (s *Consumos) Cupo(ctx context.Context, req creditsystem.ConsultarTarjetaRequest) (*creditsystem.ConsultarTarjetaResponse, error) {
	return s.cs.ConsultarTarjeta(ctx, req)
}

// Financiacion queries the financing options of an amount (ConsultarAlternativaFinanciacion).
// Nothing is stored.
func (s *Consumos) Financiacion(ctx context.Context, req creditsystem.ConsultarAlternativaFinanciacionRequest) (*creditsystem.ConsultarAlternativaFinanciacionResponse, error) {
	return s.cs.ConsultarAlternativaFinanciacion(ctx, req)
}

// AutorizacionInput is a request for an authorization. CodigoEmpresa is the caller's and is
// stored on the record; the creditsystem receives the configured company code.
type AutorizacionInput struct {
	CodigoEmpresa string
	Solicitud     creditsystem.GrabarAutorizacionRequest
}

// Autorizar asks the creditsystem for an authorization (GrabarAutorizacion) and, when it is
// granted, creates the record in state AUTORIZADO. The attempt is audited before the call; after
// a timeout no record exists (the creditsystem did not name the authorization), and the audit
// row, found by request id, is what an operator reconciles.
func (s *Consumos) Autorizar(ctx context.Context, in AutorizacionInput) (*Consumo, *creditsystem.GrabarAutorizacionResponse, error) {
	req := in.Solicitud
	now := s.now()
	intento := &Intento{
		Operacion: UpstreamGrabarAutorizacion, RequestID: requestID(ctx),
		Solicitud:  mustJSON(resumenAutorizacion(in)),
		Resultado:  ResultadoPendiente,
		IniciadoAt: now,
	}
	if err := insertIntento(ctx, s.db, intento); err != nil {
		return nil, nil, err
	}
	res, callErr := s.cs.GrabarAutorizacion(ctx, req)
	now = s.now()
	wctx, cancel := s.outcomeContext(ctx)
	defer cancel()
	if callErr == nil && (res.NumeroAutorizacion == nil || *res.NumeroAutorizacion == "") {
		callErr = &creditsystem.TransportError{Op: UpstreamGrabarAutorizacion, HTTPStatus: 200,
			Err: errors.New("answer accepted the authorization without cNumeroAutorizacion")}
	}
	if callErr != nil {
		s.anotarFallo(intento, callErr, now)
		if res != nil {
			intento.Respuesta = mustJSON(res.Raw)
		}
		if err := terminarIntento(wctx, s.db, intento); err != nil {
			return nil, nil, errors.Join(callErr, err)
		}
		if intento.Resultado == ResultadoTimeout || intento.Resultado == ResultadoTransporte {
			s.log.WarnContext(ctx, "creditsystem authorization outcome unknown: not retried",
				"operation", UpstreamGrabarAutorizacion, "attempt_id", intento.ID, "request_id", intento.RequestID,
				"identificacion", req.Identificacion, "monto", req.Monto.String(), "outcome", intento.Resultado)
		}
		return nil, nil, callErr
	}
	raw := mustJSON(res.Raw)
	c := &Consumo{
		AutorizacionID:           *res.NumeroAutorizacion,
		NumeroOperacion:          formatInt(res.NumeroOperacion),
		Estado:                   EstadoAutorizado,
		CodigoEmpresa:            in.CodigoEmpresa,
		Identificacion:           req.Identificacion,
		NumeroTarjeta:            req.NumeroTarjeta,
		CodigoProducto:           req.CodigoProducto,
		CodigoTipoCupo:           req.CodigoTipoCupo,
		CodigoTipoOperacion:      req.CodigoTipoOperacion,
		Monto:                    req.Monto,
		Plazo:                    req.Plazo,
		PuntoVenta:               req.PuntoVenta,
		CreditsystemAuthResponse: raw,
		BiometriaRequerida:       res.BiometriaRequerida,
		SourceSystem:             SourceSystemDefault,
		CreatedAt:                now,
		UpdatedAt:                now,
	}
	if res.ImagenQR != nil {
		c.ImagenQR = *res.ImagenQR
	}
	intento.Resultado, intento.Respuesta, intento.TerminadoAt = ResultadoOK, raw, now
	intento.AutorizacionID = c.AutorizacionID
	err := s.db.RunInTx(wctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := insertConsumo(ctx, tx, c); err != nil {
			return err
		}
		intento.ConsumoID = c.ID
		return terminarIntento(ctx, tx, intento)
	})
	if err != nil {
		// The transaction took the audited outcome with it; the creditsystem did grant the
		// authorization (and holds the credit), so the attempt keeps its answer for the operator
		// who reverses it upstream.
		intento.ConsumoID = 0
		if aerr := terminarIntento(wctx, s.db, intento); aerr != nil {
			err = errors.Join(err, aerr)
		}
		s.log.ErrorContext(ctx, "creditsystem granted an authorization that could not be recorded",
			"autorizacion_id", c.AutorizacionID, "attempt_id", intento.ID, "request_id", intento.RequestID, "error", err)
		return nil, nil, err
	}
	return c, res, nil
}

// RegistrarOTP stores the customer's OTP: AUTORIZADO -> OTP_RECIBIDO, no upstream call.
func (s *Consumos) RegistrarOTP(ctx context.Context, autorizacionID, otp string) (*Consumo, error) {
	for range maxClaimRounds {
		c, err := consumoPorAutorizacion(ctx, s.db, autorizacionID)
		if err != nil {
			return nil, err
		}
		prev := c.Estado
		if err := c.RegistrarOTP(otp, s.now()); err != nil {
			return nil, err
		}
		ok, err := guardar(ctx, s.db, c, prev, "", "estado", "otp")
		if err != nil {
			return nil, err
		}
		if ok {
			return c, nil
		}
	}
	return nil, s.perdida(ctx, autorizacionID, OpOTP)
}

// ConfirmacionInput confirms an authorization with its invoice.
type ConfirmacionInput struct {
	AutorizacionID string
	Factura        Factura
}

// Confirmar confirms the consumption (GrabarConsumo) with the invoice and the data of the
// original authorization; the OTP registered at /otp is sent, or "0" when none was.
// AUTORIZADO or OTP_RECIBIDO -> CONSUMIDO.
func (s *Consumos) Confirmar(ctx context.Context, in ConfirmacionInput) (*Consumo, *creditsystem.GrabarConsumoResponse, error) {
	var res *creditsystem.GrabarConsumoResponse
	f := in.Factura
	c, err := s.operar(ctx, in.AutorizacionID, OpConfirmar,
		func(c *Consumo) any { return resumenConfirmacion(c, f) },
		func(ctx context.Context, c *Consumo) (any, error) {
			var err error
			res, err = s.cs.GrabarConsumo(ctx, creditsystem.GrabarConsumoRequest{
				NumeroAutorizacion: c.AutorizacionID,
				NumeroFactura:      f.NumeroFactura,
				MontoFacturado:     f.MontoFacturado,
				FechaFactura:       creditsystem.DateOf(f.FechaFactura.Time),
				ValorIva:           f.ValorIVA,
				ValorComision:      f.ValorComision,

				CodigoProducto:      c.CodigoProducto,
				CodigoTipoCupo:      c.CodigoTipoCupo,
				CodigoTipoOperacion: c.CodigoTipoOperacion,
				Identificacion:      c.Identificacion,
				NumeroTarjeta:       c.NumeroTarjeta,
				Plazo:               c.Plazo,
				Monto:               c.Monto,
				Otp:                 c.OTP,
			})
			if err != nil {
				return nil, err
			}
			return res.Raw, nil
		},
		func(c *Consumo, raw json.RawMessage, now time.Time) error {
			return c.Confirmar(f, formatInt(res.NumeroOperacion), raw, now)
		},
		"estado", "numero_factura", "monto_facturado", "fecha_factura", "numero_operacion", "creditsystem_consumo_response")
	if err != nil {
		return nil, nil, err
	}
	return c, res, nil
}

// ReversoInput reverses an authorization; empty card or identification are taken from the
// record.
type ReversoInput struct {
	AutorizacionID string
	NumeroTarjeta  string
	Identificacion string
}

// Reversar cancels an authorization before its confirmation (GrabarReversoAutorizacion):
// AUTORIZADO or OTP_RECIBIDO -> REVERSADO.
func (s *Consumos) Reversar(ctx context.Context, in ReversoInput) (*Consumo, error) {
	tarjeta := func(c *Consumo) (string, string) {
		return cmp.Or(in.NumeroTarjeta, c.NumeroTarjeta), cmp.Or(in.Identificacion, c.Identificacion)
	}
	return s.operar(ctx, in.AutorizacionID, OpReverso,
		func(c *Consumo) any {
			t, id := tarjeta(c)
			return resumenReverso{NumeroTarjeta: t, Identificacion: id}
		},
		func(ctx context.Context, c *Consumo) (any, error) {
			t, id := tarjeta(c)
			res, err := s.cs.GrabarReversoAutorizacion(ctx, creditsystem.GrabarReversoAutorizacionRequest{
				NumeroAutorizacion: c.AutorizacionID, NumeroTarjeta: t, Identificacion: id,
			})
			if err != nil {
				return nil, err
			}
			return res.Raw, nil
		},
		func(c *Consumo, _ json.RawMessage, now time.Time) error { return c.Reversar(now) },
		"estado")
}

// ReversoConsumoInput reverses a confirmed consumption; an empty card is taken from the record.
type ReversoConsumoInput struct {
	AutorizacionID string
	NumeroTarjeta  string
}

// ReversarConsumo cancels a confirmed consumption (GrabarReversoConsumo) with the stored invoice
// number as cNumeroReferencia and lAjusteConciliacion false: CONSUMIDO -> CONSUMO_REVERSADO.
func (s *Consumos) ReversarConsumo(ctx context.Context, in ReversoConsumoInput) (*Consumo, error) {
	return s.operar(ctx, in.AutorizacionID, OpReversoConsumo,
		func(c *Consumo) any {
			return resumenReverso{NumeroTarjeta: cmp.Or(in.NumeroTarjeta, c.NumeroTarjeta), NumeroReferencia: c.NumeroFactura}
		},
		func(ctx context.Context, c *Consumo) (any, error) {
			res, err := s.cs.GrabarReversoConsumo(ctx, creditsystem.GrabarReversoConsumoRequest{
				NumeroReferencia: c.NumeroFactura,
				NumeroTarjeta:    cmp.Or(in.NumeroTarjeta, c.NumeroTarjeta),
				Identificacion:   c.Identificacion,
			})
			if err != nil {
				return nil, err
			}
			return res.Raw, nil
		},
		func(c *Consumo, _ json.RawMessage, now time.Time) error { return c.ReversarConsumo(now) },
		"estado")
}

// Consumo returns the record of an authorization.
func (s *Consumos) Consumo(ctx context.Context, autorizacionID string) (*Consumo, error) {
	return consumoPorAutorizacion(ctx, s.db, autorizacionID)
}

// Intentos returns the audited upstream attempts of an authorization, oldest first.
func (s *Consumos) Intentos(ctx context.Context, autorizacionID string) ([]Intento, error) {
	return intentosDe(ctx, s.db, autorizacionID)
}

// Reconciliar settles a record held by an upstream operation (normally one whose outcome is
// unknown after a timeout), once an operator found out from the creditsystem whether it was
// applied. aplicada = true completes the transition as if the creditsystem had answered (for a
// confirmation, with the invoice of its audited attempt; the consumption answer stays empty);
// false drops the marker and leaves the state as it was. The decision is audited as an attempt
// with result "reconciled_applied" or "reconciled_not_applied".
func (s *Consumos) Reconciliar(ctx context.Context, autorizacionID string, aplicada bool) (*Consumo, error) {
	c, err := consumoPorAutorizacion(ctx, s.db, autorizacionID)
	if err != nil {
		return nil, err
	}
	marker, prev := c.OperacionEnCurso, c.Estado
	op, ok := opDeUpstream(marker)
	if !ok {
		return nil, fmt.Errorf("%w: authorization %s", ErrNothingToReconcile, autorizacionID)
	}
	now := s.now()
	cols := append([]string{}, columnasMarcador...)
	if !aplicada {
		c.LiberarOperacion(now)
	} else {
		switch op {
		case OpConfirmar:
			f, err := s.facturaAuditada(ctx, c)
			if err != nil {
				return nil, err
			}
			err = c.Confirmar(f, "", nil, now)
			if err != nil {
				return nil, err
			}
			cols = append(cols, "estado", "numero_factura", "monto_facturado", "fecha_factura")
		case OpReverso:
			err = c.Reversar(now)
			cols = append(cols, "estado")
		case OpReversoConsumo:
			err = c.ReversarConsumo(now)
			cols = append(cols, "estado")
		}
		if err != nil {
			return nil, err
		}
	}
	resultado := ResultadoConciliadoNoAplicada
	if aplicada {
		resultado = ResultadoConciliadoAplicada
	}
	audit := &Intento{
		ConsumoID: c.ID, AutorizacionID: c.AutorizacionID, Operacion: marker, RequestID: requestID(ctx),
		Solicitud: mustJSON(map[string]any{"aplicada": aplicada}), Resultado: resultado, IniciadoAt: now, TerminadoAt: now,
	}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		ok, err := guardar(ctx, tx, c, prev, marker, cols...)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: authorization %s changed while it was reconciled", ErrNotHeld, autorizacionID)
		}
		return insertIntento(ctx, tx, audit)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// facturaAuditada reads the invoice of the confirmation attempt that holds c.
func (s *Consumos) facturaAuditada(ctx context.Context, c *Consumo) (Factura, error) {
	var in Intento
	err := s.db.NewSelect().Model(&in).Where("consumo_id = ?", c.ID).Where("operacion = ?", UpstreamGrabarConsumo).
		Order("id DESC").Limit(1).Scan(ctx)
	if err != nil {
		return Factura{}, fmt.Errorf("credit: no audited confirmation for %s: %w", c.AutorizacionID, err)
	}
	var r resumenConfirmacionJSON
	if err := json.Unmarshal(in.Solicitud, &r); err != nil {
		return Factura{}, fmt.Errorf("credit: audited confirmation of %s: %w", c.AutorizacionID, err)
	}
	fecha, err := ParseFecha(r.FechaFactura)
	if err != nil {
		return Factura{}, err
	}
	monto, err := decimal.NewFromString(r.MontoFacturado)
	if err != nil {
		return Factura{}, fmt.Errorf("credit: audited confirmation of %s: %w", c.AutorizacionID, err)
	}
	return Factura{NumeroFactura: r.NumeroFactura, MontoFacturado: monto, FechaFactura: fecha}, nil
}

// operar runs one upstream operation on an existing record: claim, call, record the outcome.
// resumen builds the audit summary from the claimed record; call performs the SDK call and
// returns its raw answer; completar applies the transition, whose columns are cols.
func (s *Consumos) operar(ctx context.Context, autorizacionID string, op Operacion,
	resumen func(*Consumo) any,
	call func(context.Context, *Consumo) (any, error),
	completar func(*Consumo, json.RawMessage, time.Time) error,
	cols ...string,
) (*Consumo, error) {
	c, prev, intento, err := s.reclamar(ctx, autorizacionID, op, resumen)
	if err != nil {
		return nil, err
	}
	marker := c.OperacionEnCurso
	raw, callErr := call(ctx, c)
	now := s.now()
	wctx, cancel := s.outcomeContext(ctx)
	defer cancel()

	if callErr == nil {
		answer := mustJSON(raw)
		held := *c
		if err := completar(c, answer, now); err != nil {
			return nil, err
		}
		intento.Resultado, intento.Respuesta, intento.TerminadoAt = ResultadoOK, answer, now
		err := s.db.RunInTx(wctx, nil, func(ctx context.Context, tx bun.Tx) error {
			ok, err := guardar(ctx, tx, c, prev, marker, append(append([]string{}, columnasMarcador...), cols...)...)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("%w: authorization %s, %s", ErrNotHeld, autorizacionID, marker)
			}
			return terminarIntento(ctx, tx, intento)
		})
		if err != nil {
			// The marker stays: the record is held until an operator looks at it, which is
			// what we want for an applied operation we failed to record. Flagged as an unknown
			// outcome, later callers are told to wait for the operator rather than to retry, and
			// the attempt keeps the answer that says it was applied.
			held.MarcarResultadoDesconocido(now)
			if _, herr := guardar(wctx, s.db, &held, prev, marker, columnasMarcador...); herr != nil {
				err = errors.Join(err, herr)
			}
			if aerr := terminarIntento(wctx, s.db, intento); aerr != nil {
				err = errors.Join(err, aerr)
			}
			s.log.ErrorContext(ctx, "creditsystem applied an operation that could not be recorded",
				"autorizacion_id", autorizacionID, "operation", marker, "attempt_id", intento.ID, "request_id", intento.RequestID, "error", err)
			return nil, err
		}
		return c, nil
	}

	s.anotarFallo(intento, callErr, now)
	if intento.Resultado == ResultadoRechazado || intento.Resultado == ResultadoFault || !enviado(callErr) {
		c.LiberarOperacion(now)
	} else {
		c.MarcarResultadoDesconocido(now)
		s.log.WarnContext(ctx, "creditsystem outcome unknown: authorization held until reconciled, not retried",
			"autorizacion_id", autorizacionID, "operation", marker, "attempt_id", intento.ID, "request_id", intento.RequestID, "outcome", intento.Resultado)
	}
	err = s.db.RunInTx(wctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := guardar(ctx, tx, c, prev, marker, columnasMarcador...); err != nil {
			return err
		}
		return terminarIntento(ctx, tx, intento)
	})
	if err != nil {
		return nil, errors.Join(callErr, err)
	}
	return nil, callErr
}

// reclamar reads the record, checks that op may start and commits the in-flight marker with the
// pending audit row. It returns the claimed record and the state it was claimed in.
func (s *Consumos) reclamar(ctx context.Context, autorizacionID string, op Operacion, resumen func(*Consumo) any) (*Consumo, Estado, *Intento, error) {
	for range maxClaimRounds {
		c, err := consumoPorAutorizacion(ctx, s.db, autorizacionID)
		if err != nil {
			return nil, "", nil, err
		}
		prev := c.Estado
		now := s.now()
		if err := c.IniciarOperacion(op, now); err != nil {
			return nil, "", nil, err
		}
		intento := &Intento{
			ConsumoID: c.ID, AutorizacionID: c.AutorizacionID, Operacion: c.OperacionEnCurso,
			RequestID: requestID(ctx), Solicitud: mustJSON(resumen(c)), Resultado: ResultadoPendiente, IniciadoAt: now,
		}
		var won bool
		err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			var err error
			if won, err = guardar(ctx, tx, c, prev, "", columnasMarcador...); err != nil || !won {
				return err
			}
			return insertIntento(ctx, tx, intento)
		})
		if err != nil {
			return nil, "", nil, err
		}
		if won {
			return c, prev, intento, nil
		}
	}
	return nil, "", nil, s.perdida(ctx, autorizacionID, op)
}

// perdida explains a compare-and-set lost maxClaimRounds times: the state machine names the
// reason from a fresh read.
func (s *Consumos) perdida(ctx context.Context, autorizacionID string, op Operacion) error {
	c, err := consumoPorAutorizacion(ctx, s.db, autorizacionID)
	if err != nil {
		return err
	}
	if err := c.permite(op); err != nil {
		return err
	}
	return &ConflictError{AutorizacionID: autorizacionID, Operacion: string(op), Desde: s.now()}
}

func (s *Consumos) outcomeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.writeTimeout)
}

// anotarFallo records the kind of a failed call on the attempt.
func (s *Consumos) anotarFallo(in *Intento, err error, now time.Time) {
	in.TerminadoAt = now
	var be *creditsystem.Error
	var fe *creditsystem.FaultError
	switch {
	case errors.As(err, &be):
		code := be.Code
		in.Resultado, in.CodigoUpstream, in.MensajeUpstream = ResultadoRechazado, &code, be.Message
	case errors.As(err, &fe):
		in.Resultado, in.MensajeUpstream = ResultadoFault, fe.Code+": "+fe.String
	case creditsystem.IsTimeout(err):
		in.Resultado, in.MensajeUpstream = ResultadoTimeout, err.Error()
	default:
		in.Resultado, in.MensajeUpstream = ResultadoTransporte, err.Error()
	}
}

// enviado reports whether a failed call may have reached the creditsystem. Only a failed dial
// proves that nothing left.
func enviado(err error) bool {
	var oe *net.OpError
	return !(errors.As(err, &oe) && oe.Op == "dial")
}

func formatInt(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		// Only our own summaries and the SDK's RawAnswer are marshalled; both always encode.
		panic(fmt.Sprintf("credit: marshal %T: %v", v, err))
	}
	return b
}

// Audit summaries: what was asked, without secrets. An OTP is recorded as its kind only.
type resumenAutorizacionJSON struct {
	CodigoEmpresa       string `json:"codigo_empresa"`
	Identificacion      string `json:"identificacion"`
	NumeroTarjeta       string `json:"numero_tarjeta,omitempty"`
	CodigoProducto      string `json:"codigo_producto"`
	CodigoTipoCupo      string `json:"codigo_tipo_cupo,omitempty"`
	CodigoTipoOperacion string `json:"codigo_tipo_operacion,omitempty"`
	Monto               string `json:"monto"`
	Plazo               int    `json:"plazo"`
	PuntoVenta          string `json:"punto_venta"`
	CuotaInicial        string `json:"cuota_inicial,omitempty"`
	GarantiaExtendida   bool   `json:"garantia_extendida"`
	Articulos           int    `json:"articulos"`
	OTP                 string `json:"otp"` // "provided" or "bypass"
}

func resumenAutorizacion(in AutorizacionInput) resumenAutorizacionJSON {
	r := in.Solicitud
	out := resumenAutorizacionJSON{
		CodigoEmpresa: in.CodigoEmpresa, Identificacion: r.Identificacion, NumeroTarjeta: r.NumeroTarjeta,
		CodigoProducto: r.CodigoProducto, CodigoTipoCupo: r.CodigoTipoCupo, CodigoTipoOperacion: r.CodigoTipoOperacion,
		Monto: r.Monto.String(), Plazo: r.Plazo, PuntoVenta: r.PuntoVenta, GarantiaExtendida: r.GarantiaExtendida,
		Articulos: len(r.Articulos), OTP: "bypass",
	}
	if r.CuotaInicial != nil {
		out.CuotaInicial = r.CuotaInicial.String()
	}
	if r.Otp != "" {
		out.OTP = "provided"
	}
	return out
}

type resumenConfirmacionJSON struct {
	NumeroFactura  string `json:"numero_factura"`
	MontoFacturado string `json:"monto_facturado"`
	FechaFactura   string `json:"fecha_factura"`
	ValorIVA       string `json:"valor_iva,omitempty"`
	ValorComision  string `json:"valor_comision,omitempty"`
	OTP            string `json:"otp"` // "registered" or "none" (sent as 0)
}

func resumenConfirmacion(c *Consumo, f Factura) resumenConfirmacionJSON {
	r := resumenConfirmacionJSON{
		NumeroFactura: f.NumeroFactura, MontoFacturado: f.MontoFacturado.String(), FechaFactura: f.FechaFactura.String(), OTP: "none",
	}
	if f.ValorIVA != nil {
		r.ValorIVA = f.ValorIVA.String()
	}
	if f.ValorComision != nil {
		r.ValorComision = f.ValorComision.String()
	}
	if c.OTP != "" {
		r.OTP = "registered"
	}
	return r
}

type resumenReverso struct {
	NumeroTarjeta    string `json:"numero_tarjeta,omitempty"`
	Identificacion   string `json:"identificacion,omitempty"`
	NumeroReferencia string `json:"numero_referencia,omitempty"`
}
