package consumption

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/internal/sealed"
	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/upstream"
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

// Service is the consumption module's use cases (see the package documentation). Build it with
// [NewService]; it is safe for concurrent use and keeps no state of its own, so several service
// instances can share one database.
type Service struct {
	store        *Store
	cs           Creditsystem
	now          func() time.Time
	log          *slog.Logger
	writeTimeout time.Duration
	staleAfter   time.Duration
	otpBox       *sealed.Box
}

// DevOTPKey seals OTPs when WithOTPKey is not given: development only (CREDIT_OTP_KEY).
const DevOTPKey = "dev-otp-key-change-me"

// DefaultStaleAfter is how long an operation may hold a record before it counts as dead (its
// outcome unknown): the creditsystem timeout's default, 30 s, and a margin. Set it with
// WithCallTimeout.
const DefaultStaleAfter = 45 * time.Second

// Option configures a Service.
type Option func(*Service) error

// WithClock replaces the clock of the record's timestamps (tests).
func WithClock(now func() time.Time) Option {
	return func(s *Service) error {
		if now == nil {
			return errors.New("consumption: WithClock: nil clock")
		}
		s.now = func() time.Time { return now().UTC() }
		return nil
	}
}

// WithLogger sets the logger of unknown outcomes and unrecorded answers (default: none).
func WithLogger(l *slog.Logger) Option {
	return func(s *Service) error {
		if l == nil {
			return errors.New("consumption: WithLogger: nil logger")
		}
		s.log = l
		return nil
	}
}

// WithOTPKey sets the secret the customer's OTP is sealed with while it is kept
// (CREDIT_OTP_KEY). Every instance on a database needs the same one.
func WithOTPKey(secret string) Option {
	return func(s *Service) error {
		box, err := sealed.New(secret)
		if err != nil {
			return fmt.Errorf("consumption: WithOTPKey: %w", err)
		}
		s.otpBox = box
		return nil
	}
}

// WithCallTimeout tells the service the creditsystem timeout (CREDITSYSTEM_TIMEOUT): an operation
// holding a record longer than it, and a margin, belongs to a process that died during the call,
// and the record reads as held with an unknown outcome.
func WithCallTimeout(d time.Duration) Option {
	return func(s *Service) error {
		if d <= 0 {
			return errors.New("consumption: WithCallTimeout: the timeout must be positive")
		}
		s.staleAfter = d + 15*time.Second
		return nil
	}
}

// NewService returns the consumption module on store calling cs.
func NewService(store *Store, cs Creditsystem, opts ...Option) (*Service, error) {
	if store == nil || cs == nil {
		return nil, errors.New("consumption: NewService: store and creditsystem client are required")
	}
	s := &Service{
		store: store, cs: cs,
		now:          func() time.Time { return time.Now().UTC() },
		log:          slog.New(slog.DiscardHandler),
		writeTimeout: DefaultOutcomeWriteTimeout,
		staleAfter:   DefaultStaleAfter,
	}
	s.otpBox, _ = sealed.New(DevOTPKey)
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
func (s *Service) Cupo(ctx context.Context, in CupoInput) (*creditsystem.ConsultarTarjetaResponse, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return s.cs.ConsultarTarjeta(ctx, creditsystem.ConsultarTarjetaRequest{Identificacion: in.Identificacion, NumeroTarjeta: in.NumeroTarjeta})
}

// Financiacion queries the financing options of an amount (ConsultarAlternativaFinanciacion).
// Nothing is stored.
func (s *Service) Financiacion(ctx context.Context, in FinanciacionInput) (*creditsystem.ConsultarAlternativaFinanciacionResponse, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return s.cs.ConsultarAlternativaFinanciacion(ctx, creditsystem.ConsultarAlternativaFinanciacionRequest{
		NumeroTarjeta: in.NumeroTarjeta, CodigoProducto: in.CodigoProducto, CodigoTipoCupo: in.CodigoTipoCupo,
		CodigoTipoOperacion: in.CodigoTipoOperacion, Monto: in.Monto, Articulos: articulos(in.Items),
	})
}

func articulos(items []Articulo) []creditsystem.Articulo {
	if len(items) == 0 {
		return nil
	}
	out := make([]creditsystem.Articulo, len(items))
	for i, it := range items {
		out[i] = creditsystem.Articulo{
			CodigoArticulo: it.CodigoArticulo, TextoArticulo: it.TextoArticulo, Cantidad: it.Cantidad,
			Precio: it.Precio, CodigoTipoArticulo: it.CodigoTipoArticulo, Caracteristicas: it.Caracteristicas,
		}
	}
	return out
}

// Autorizar asks the creditsystem for an authorization (GrabarAutorizacion) and, when it is
// granted, creates the record in state AUTORIZADO. The attempt is audited before the call; after
// a timeout no record exists (the creditsystem did not name the authorization), and the audit
// row, found by request id, is what an operator reconciles.
func (s *Service) Autorizar(ctx context.Context, in AutorizacionInput) (*Consumo, *creditsystem.GrabarAutorizacionResponse, error) {
	if err := in.Validate(); err != nil {
		return nil, nil, err
	}
	req := creditsystem.GrabarAutorizacionRequest{
		Identificacion: in.Identificacion, NumeroTarjeta: in.NumeroTarjeta, CodigoProducto: in.CodigoProducto,
		CodigoTipoCupo: in.CodigoTipoCupo, CodigoTipoOperacion: in.CodigoTipoOperacion, Plazo: in.Plazo,
		Monto: in.Monto, CuotaInicial: in.CuotaInicial, GarantiaExtendida: in.GarantiaExtendida,
		PuntoVenta: in.PuntoVenta, Articulos: articulos(in.Items), Otp: in.OTP,
	}
	now := s.now()
	intento := &Intento{
		Operacion: UpstreamGrabarAutorizacion, RequestID: requestID(ctx),
		NumeroTarjeta: in.NumeroTarjeta, Identificacion: in.Identificacion,
		Solicitud:  mustJSON(resumenAutorizacion(in)),
		Resultado:  ResultadoPendiente,
		IniciadoAt: now,
	}
	if err := s.store.StartIntento(ctx, intento); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		// The request's deadline passed while it waited for the database: nothing is sent.
		intento.Resultado, intento.TerminadoAt = ResultadoNoEnviado, s.now()
		wctx, cancel := s.outcomeContext(ctx)
		defer cancel()
		return nil, nil, errors.Join(err, s.store.FinishIntento(wctx, intento))
	}
	// The call runs to its own deadline (CREDITSYSTEM_TIMEOUT), whatever happens to the request:
	// its answer is recorded.
	res, callErr := s.cs.GrabarAutorizacion(context.WithoutCancel(ctx), req)
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
		if err := storage.RetryWrite(wctx, func(ctx context.Context) error { return s.store.FinishIntento(ctx, intento) }); err != nil {
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
	err := storage.RetryWrite(wctx, func(ctx context.Context) error { return s.store.InsertAutorizado(ctx, c, intento) })
	if err == nil {
		return c, res, nil
	}
	// The transaction took the audited outcome with it; the creditsystem did grant the
	// authorization (and holds the credit), so the attempt keeps its answer and is marked for the
	// automatic reversal (ReversarNoRegistradas). An id the creditsystem had already given is
	// recorded: its attempt keeps the answer for an operator and nothing is reversed.
	intento.ConsumoID = 0
	duplicada := errors.Is(err, errYaRegistrada)
	if !duplicada {
		intento.Resultado = ResultadoNoRegistrada
	}
	if aerr := storage.RetryWrite(wctx, func(ctx context.Context) error { return s.store.FinishIntento(ctx, intento) }); aerr != nil {
		err = errors.Join(err, aerr)
	}
	s.log.ErrorContext(ctx, "creditsystem granted an authorization that could not be recorded",
		"autorizacion_id", c.AutorizacionID, "attempt_id", intento.ID, "request_id", intento.RequestID, "error", err)
	return nil, nil, &UnrecordedError{AutorizacionID: c.AutorizacionID, NumeroOperacion: c.NumeroOperacion,
		Operacion: UpstreamGrabarAutorizacion, Duplicate: duplicada, Err: err}
}

// RegistrarOTP stores the customer's OTP: AUTORIZADO -> OTP_RECIBIDO, no upstream call. The OTP
// is kept sealed (AES-256-GCM with WithOTPKey's secret, bound to the authorization) until the
// confirmation sends it upstream, and emptied when the flow ends.
func (s *Service) RegistrarOTP(ctx context.Context, in OTPInput) (*Consumo, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return s.store.Update(ctx, in.AutorizacionID, func(c *Consumo) error {
		now := s.now()
		c.Envejecer(now.Add(-s.staleAfter))
		return c.RegistrarOTP(s.otpBox.Seal(in.OTP, c.AutorizacionID), now)
	})
}

// otp is the registered OTP of c in clear, "" when none is kept.
func (s *Service) otp(c *Consumo) (string, error) {
	if c.OTPSellado == "" {
		return c.OTP, nil // a record of an earlier version, or none
	}
	otp, err := s.otpBox.Open(c.OTPSellado, c.AutorizacionID)
	if err != nil {
		return "", fmt.Errorf("consumption: the OTP of authorization %s cannot be read (CREDIT_OTP_KEY changed?): %w", c.AutorizacionID, err)
	}
	return otp, nil
}

// Confirmar confirms the consumption (GrabarConsumo) with the invoice and the data of the
// original authorization; the OTP registered at /otp is sent, or "0" when none was.
// AUTORIZADO or OTP_RECIBIDO -> CONSUMIDO.
func (s *Service) Confirmar(ctx context.Context, in ConfirmacionInput) (*Consumo, *creditsystem.GrabarConsumoResponse, error) {
	if err := in.Validate(); err != nil {
		return nil, nil, err
	}
	var res *creditsystem.GrabarConsumoResponse
	f := in.Factura
	c, err := s.operar(ctx, in.AutorizacionID, OpConfirmar,
		func(c *Consumo) any {
			c.FacturaEnCurso = &f
			return resumenConfirmacion(c, f)
		},
		func(ctx context.Context, c *Consumo) (any, error) {
			otp, err := s.otp(c)
			if err != nil {
				return nil, err
			}
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
				Otp:                 otp,
			})
			if err != nil {
				return nil, err
			}
			return res.Raw, nil
		},
		func(c *Consumo, raw json.RawMessage, now time.Time) error {
			return c.Confirmar(f, formatInt(res.NumeroOperacion), raw, now)
		})
	var unrecorded *UnrecordedError
	if errors.As(err, &unrecorded) && res != nil && res.NumeroOperacion != nil {
		unrecorded.NumeroOperacion = formatInt(res.NumeroOperacion)
	}
	if err != nil {
		return nil, nil, err
	}
	return c, res, nil
}

// Reversar cancels an authorization before its confirmation (GrabarReversoAutorizacion):
// AUTORIZADO or OTP_RECIBIDO -> REVERSADO.
func (s *Service) Reversar(ctx context.Context, in ReversoInput) (*Consumo, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
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
		func(c *Consumo, _ json.RawMessage, now time.Time) error { return c.Reversar(now) })
}

// ReversarConsumo cancels a confirmed consumption (GrabarReversoConsumo) with the stored invoice
// number as cNumeroReferencia and lAjusteConciliacion false: CONSUMIDO -> CONSUMO_REVERSADO.
func (s *Service) ReversarConsumo(ctx context.Context, in ReversoConsumoInput) (*Consumo, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
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
		func(c *Consumo, _ json.RawMessage, now time.Time) error { return c.ReversarConsumo(now) })
}

// Consumo returns the record of an authorization; one held by an operation older than the call
// timeout reads as held with an unknown outcome.
func (s *Service) Consumo(ctx context.Context, autorizacionID string) (*Consumo, error) {
	c, err := s.store.ByAutorizacion(ctx, autorizacionID)
	if err != nil {
		return nil, err
	}
	c.Envejecer(s.now().Add(-s.staleAfter))
	return c, nil
}

// Intentos returns the audited upstream attempts of an authorization, oldest first.
func (s *Service) Intentos(ctx context.Context, autorizacionID string) ([]Intento, error) {
	return s.store.Intentos(ctx, autorizacionID)
}

// Reconciliar settles a record held by an upstream operation (normally one whose outcome is
// unknown after a timeout), once an operator found out from the creditsystem whether it was
// applied. aplicada = true completes the transition as if the creditsystem had answered (for a
// confirmation, with the invoice kept on the record; the consumption answer stays empty); false
// drops the marker and leaves the state as it was. The decision is audited as an attempt with
// result "reconciled_applied" or "reconciled_not_applied".
func (s *Service) Reconciliar(ctx context.Context, autorizacionID string, aplicada bool) (*Consumo, error) {
	return s.store.Reconcile(ctx, autorizacionID, func(c *Consumo) (*Intento, error) {
		marker := c.OperacionEnCurso
		op, ok := opDeUpstream(marker)
		if !ok {
			return nil, fmt.Errorf("%w: authorization %s", ErrNothingToReconcile, autorizacionID)
		}
		now := s.now()
		var err error
		switch {
		case !aplicada:
			c.LiberarOperacion(now)
		case op == OpConfirmar:
			if c.FacturaEnCurso == nil {
				return nil, fmt.Errorf("consumption: authorization %s holds %s without its invoice", autorizacionID, marker)
			}
			err = c.Confirmar(*c.FacturaEnCurso, "", nil, now)
		case op == OpReverso:
			err = c.Reversar(now)
		case op == OpReversoConsumo:
			err = c.ReversarConsumo(now)
		}
		if err != nil {
			return nil, err
		}
		resultado := ResultadoConciliadoNoAplicada
		if aplicada {
			resultado = ResultadoConciliadoAplicada
		}
		return &Intento{
			ConsumoID: c.ID, AutorizacionID: c.AutorizacionID, Operacion: marker, RequestID: requestID(ctx),
			Solicitud: mustJSON(map[string]any{"aplicada": aplicada}), Resultado: resultado, IniciadoAt: now, TerminadoAt: now,
		}, nil
	})
}

// operar runs one upstream operation on an existing record: claim, call, settle. prepare
// readies the claimed record for op and returns the audit summary; call performs the SDK call
// and returns its raw answer; completar applies the transition.
func (s *Service) operar(ctx context.Context, autorizacionID string, op Operacion,
	prepare func(*Consumo) any,
	call func(context.Context, *Consumo) (any, error),
	completar func(*Consumo, json.RawMessage, time.Time) error,
) (*Consumo, error) {
	claim, err := s.store.Claim(ctx, autorizacionID, func(c *Consumo) (*Intento, error) {
		now := s.now()
		c.Envejecer(now.Add(-s.staleAfter))
		if err := c.IniciarOperacion(op, now); err != nil {
			return nil, err
		}
		return &Intento{
			Operacion: c.OperacionEnCurso, RequestID: requestID(ctx), Solicitud: mustJSON(prepare(c)),
			Resultado: ResultadoPendiente, IniciadoAt: now,
		}, nil
	})
	if err != nil {
		return nil, err
	}
	intento, marker := claim.Intento, claim.Consumo.OperacionEnCurso
	wctx, cancel := s.outcomeContext(ctx)
	defer cancel()
	if err := ctx.Err(); err != nil {
		// The request's deadline passed while it waited for the database: nothing is sent, and
		// the record is released as it was.
		intento.Resultado, intento.TerminadoAt = ResultadoNoEnviado, s.now()
		_, serr := s.store.Settle(wctx, claim, func(c *Consumo) error { c.LiberarOperacion(s.now()); return nil })
		return nil, errors.Join(err, serr)
	}
	// The call runs to its own deadline (CREDITSYSTEM_TIMEOUT), whatever happens to the request.
	raw, callErr := call(context.WithoutCancel(ctx), claim.Consumo)
	now := s.now()

	settle := func(fn func(*Consumo) error) (c *Consumo, err error) {
		err = storage.RetryWrite(wctx, func(ctx context.Context) error {
			c, err = s.store.Settle(ctx, claim, fn)
			return err
		})
		return c, err
	}
	if callErr == nil {
		answer := mustJSON(raw)
		intento.Resultado, intento.Respuesta, intento.TerminadoAt = ResultadoOK, answer, now
		c, err := settle(func(c *Consumo) error { return completar(c, answer, now) })
		if err != nil {
			// The marker stays: the record is held until an operator looks at it, which is
			// what we want for an applied operation we failed to record. Flagged as an unknown
			// outcome, later callers are told to wait for the operator rather than to retry, and
			// the attempt keeps the answer that says it was applied.
			if _, herr := settle(func(c *Consumo) error {
				c.MarcarResultadoDesconocido(now)
				return nil
			}); herr != nil {
				err = errors.Join(err, herr)
			}
			s.log.ErrorContext(ctx, "creditsystem applied an operation that could not be recorded",
				"autorizacion_id", autorizacionID, "operation", marker, "attempt_id", intento.ID, "request_id", intento.RequestID, "error", err)
			return nil, &UnrecordedError{AutorizacionID: autorizacionID, NumeroOperacion: claim.Consumo.NumeroOperacion, Operacion: marker, Err: err}
		}
		return c, nil
	}

	s.anotarFallo(intento, callErr, now)
	unknown := applied(callErr)
	if unknown {
		s.log.WarnContext(ctx, "creditsystem outcome unknown: authorization held until reconciled, not retried",
			"autorizacion_id", autorizacionID, "operation", marker, "attempt_id", intento.ID, "request_id", intento.RequestID, "outcome", intento.Resultado)
	}
	c, err := settle(func(c *Consumo) error {
		if unknown {
			c.MarcarResultadoDesconocido(now)
		} else {
			c.LiberarOperacion(now)
		}
		return nil
	})
	if err != nil {
		if unknown {
			// The creditsystem may have acted and the record is still held by the claim's
			// marker: the answer names it all the same (as stored, with the outcome unknown).
			held := *claim.Consumo
			held.MarcarResultadoDesconocido(now)
			return nil, &HeldError{Consumo: &held, Err: errors.Join(callErr, err)}
		}
		return nil, errors.Join(callErr, err)
	}
	if unknown {
		return nil, &HeldError{Consumo: c, Err: callErr}
	}
	return nil, callErr
}

func (s *Service) outcomeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.writeTimeout)
}

// anotarFallo records the kind of a failed call on the attempt.
func (s *Service) anotarFallo(in *Intento, err error, now time.Time) {
	in.TerminadoAt = now
	ue, _ := upstream.As(err)
	switch kind := upstream.KindOf(err); {
	case kind == upstream.Rejected:
		code, _ := strconv.Atoi(ue.ErrorCode())
		in.Resultado, in.CodigoUpstream, in.MensajeUpstream = ResultadoRechazado, &code, ue.ErrorMessage()
	case kind == upstream.Fault:
		in.Resultado, in.MensajeUpstream = ResultadoFault, ue.ErrorCode()+": "+ue.ErrorMessage()
	case upstream.IsTimeout(err):
		in.Resultado, in.MensajeUpstream = ResultadoTimeout, err.Error()
	default:
		in.Resultado, in.MensajeUpstream = ResultadoTransporte, err.Error()
	}
}

// applied reports whether a failed call may have been applied by the creditsystem: not after a
// rejection or a fault (it answered that it did not), nor when the request never left.
func applied(err error) bool {
	switch upstream.KindOf(err) {
	case upstream.Rejected, upstream.Fault, upstream.NotSent:
		return false
	}
	return true
}

func formatInt(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10)
}

func mustJSON(v any) json.RawMessage {
	var b []byte
	var err error
	if raw, ok := v.(creditsystem.RawAnswer); ok {
		b, err = raw.MarshalJSON() // compact already: json.Marshal would only check it again
	} else {
		b, err = json.Marshal(v)
	}
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
	out := resumenAutorizacionJSON{
		CodigoEmpresa: in.CodigoEmpresa, Identificacion: in.Identificacion, NumeroTarjeta: in.NumeroTarjeta,
		CodigoProducto: in.CodigoProducto, CodigoTipoCupo: in.CodigoTipoCupo, CodigoTipoOperacion: in.CodigoTipoOperacion,
		Monto: in.Monto.String(), Plazo: in.Plazo, PuntoVenta: in.PuntoVenta, GarantiaExtendida: in.GarantiaExtendida,
		Articulos: len(in.Items), OTP: "bypass",
	}
	if in.CuotaInicial != nil {
		out.CuotaInicial = in.CuotaInicial.String()
	}
	if in.OTP != "" {
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
	if c.OTPRegistrado() {
		r.OTP = "registered"
	}
	return r
}

type resumenReverso struct {
	NumeroTarjeta    string `json:"numero_tarjeta,omitempty"`
	Identificacion   string `json:"identificacion,omitempty"`
	NumeroReferencia string `json:"numero_referencia,omitempty"`
}

// ReversarNoRegistradas runs one pass of the reversal of granted authorizations that could not be
// recorded (ResultadoNoRegistrada): each is claimed (ResultadoRevirtiendo), so that two passes
// never both reverse it, and reversed with GrabarReversoAutorizacion, audited as an attempt of its
// own. The outcome lands on the granting attempt: reversed (ResultadoRevertida), refused by the
// creditsystem (ResultadoReversoRechazado) or unknown after a timeout (ResultadoReversoDesconocido;
// never retried): both of the last need an operator. A reversal that never left goes back to
// ResultadoNoRegistrada for the next pass. It returns how many were reversed.
func (s *Service) ReversarNoRegistradas(ctx context.Context) (int, error) {
	list, err := s.store.NoRegistradas(ctx, 50)
	if err != nil {
		return 0, err
	}
	reversed := 0
	var errs []error
	for _, in := range list {
		ok, err := s.revertir(ctx, in)
		if err != nil {
			errs = append(errs, fmt.Errorf("authorization %s: %w", in.AutorizacionID, err))
		}
		if ok {
			reversed++
		}
	}
	return reversed, errors.Join(errs...)
}

func (s *Service) revertir(ctx context.Context, in Intento) (bool, error) {
	claimed, err := s.store.MoveIntento(ctx, in.ID, ResultadoNoRegistrada, ResultadoRevirtiendo, nil)
	if err != nil || !claimed {
		return false, err
	}
	now := s.now()
	audit := &Intento{
		AutorizacionID: in.AutorizacionID, Operacion: UpstreamGrabarReversoAutorizacion, RequestID: in.RequestID,
		NumeroTarjeta: in.NumeroTarjeta, Identificacion: in.Identificacion,
		Solicitud:  mustJSON(resumenReverso{NumeroTarjeta: in.NumeroTarjeta, Identificacion: in.Identificacion}),
		Resultado:  ResultadoOK,
		IniciadoAt: now,
	}
	res, callErr := s.cs.GrabarReversoAutorizacion(context.WithoutCancel(ctx), creditsystem.GrabarReversoAutorizacionRequest{
		NumeroAutorizacion: in.AutorizacionID, NumeroTarjeta: in.NumeroTarjeta, Identificacion: in.Identificacion,
	})
	now = s.now()
	wctx, cancel := s.outcomeContext(ctx)
	defer cancel()
	to := ResultadoRevertida
	switch kind := upstream.KindOf(callErr); {
	case callErr == nil:
		audit.Respuesta, audit.TerminadoAt = mustJSON(res.Raw), now
	case kind == upstream.NotSent:
		// Nothing left: the next pass tries again.
		_, err := s.store.MoveIntento(wctx, in.ID, ResultadoRevirtiendo, ResultadoNoRegistrada, nil)
		return false, errors.Join(callErr, err)
	default:
		s.anotarFallo(audit, callErr, now)
		to = ResultadoReversoRechazado
		if applied(callErr) {
			to = ResultadoReversoDesconocido
		}
	}
	err = storage.RetryWrite(wctx, func(ctx context.Context) error {
		_, err := s.store.MoveIntento(ctx, in.ID, ResultadoRevirtiendo, to, audit)
		return err
	})
	if to != ResultadoRevertida {
		s.log.ErrorContext(ctx, "an unrecorded authorization could not be reversed automatically; an operator must reverse it",
			"autorizacion_id", in.AutorizacionID, "attempt_id", in.ID, "outcome", to, "error", callErr)
		return false, err
	}
	s.log.WarnContext(ctx, "an authorization granted but not recorded was reversed", "autorizacion_id", in.AutorizacionID, "attempt_id", in.ID)
	return err == nil, err
}

// Atender records that an operator settled by hand an attempt that needed a person (see
// Store.Unknown): an authorization whose outcome is unknown (timeout, lost connection, or a
// call that never ended), or a granted one whose automatic reversal was refused, is unknown or
// never ended. The operator first makes the creditsystem right (reverses the authorization there
// if it was granted); the attempt then becomes ResultadoAtendido, and an audit attempt keeps the
// earlier result and the note. Records held by an operation are settled with Reconciliar.
func (s *Service) Atender(ctx context.Context, intentoID int64, nota string) (*Intento, error) {
	in, err := s.store.Intento(ctx, intentoID)
	if err != nil {
		return nil, err
	}
	stale := in.IniciadoAt.Before(s.now().Add(-s.staleAfter))
	switch {
	case in.Operacion != UpstreamGrabarAutorizacion:
	case in.Resultado == ResultadoTimeout, in.Resultado == ResultadoTransporte,
		in.Resultado == ResultadoReversoRechazado, in.Resultado == ResultadoReversoDesconocido,
		in.Resultado == ResultadoRevirtiendo && stale, in.Resultado == ResultadoPendiente && stale:
		now := s.now()
		audit := &Intento{
			AutorizacionID: in.AutorizacionID, Operacion: in.Operacion, RequestID: requestID(ctx),
			NumeroTarjeta: in.NumeroTarjeta, Identificacion: in.Identificacion,
			Solicitud: mustJSON(map[string]any{"intento_id": in.ID, "resultado_anterior": in.Resultado, "nota": nota}),
			Resultado: ResultadoAtendido, IniciadoAt: now, TerminadoAt: now,
		}
		moved, err := s.store.MoveIntento(ctx, in.ID, in.Resultado, ResultadoAtendido, audit)
		if err != nil {
			return nil, err
		}
		if moved {
			in.Resultado = ResultadoAtendido
			return in, nil
		}
	}
	return nil, fmt.Errorf("%w: attempt %d (%s, %s) does not need a person", ErrNothingToReconcile, in.ID, in.Operacion, in.Resultado)
}

// Run calls ReversarNoRegistradas every interval until ctx ends.
func (s *Service) Run(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := s.ReversarNoRegistradas(ctx); err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "consumption: reversal pass", "error", err)
		}
	}
}

// Pendientes counts what needs a person (see Store.Unknown), for the service's metrics.
func (s *Service) Pendientes(ctx context.Context) (held, unrecorded int, err error) {
	return s.store.Unknown(ctx, s.now().Add(-s.staleAfter))
}
