package consumption

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

const testBypass = "S3CR3T-BY"

func newTestConsumos(t *testing.T, tg storagetest.Target, cfg creditsystem.Config, opts ...Option) *Service {
	t.Helper()
	cs, err := creditsystem.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewService(NewStore(tg.DB), cs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func fakeConfig(t *testing.T, fake *creditsystemtest.Server, timeout time.Duration) creditsystem.Config {
	t.Helper()
	cfg := fake.Config()
	cfg.Timeout = timeout
	cfg.OTPBypass = testBypass
	return cfg
}

func autorizacionInput(monto string) AutorizacionInput {
	return AutorizacionInput{CodigoEmpresa: "000598",
		Identificacion: "0911111111", NumeroTarjeta: "4111000011110000", CodigoProducto: "001",
		Plazo: 6, Monto: decimal.RequireFromString(monto), PuntoVenta: "PV-1",
	}
}

// A refused connection proves the request never left: the claim is released instead of being
// held for reconciliation.
func TestRefusedConnectionReleasesTheClaim(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		migrated(t, tg)
		fake := creditsystemtest.NewServer()
		t.Cleanup(fake.Close)
		s := newTestConsumos(t, tg, fakeConfig(t, fake, 2*time.Second))
		c, _, err := s.Autorizar(t.Context(), autorizacionInput("100.00"))
		if err != nil {
			t.Fatal(err)
		}

		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://" + ln.Addr().String() + "/Cartera"
		ln.Close()
		cfg := fakeConfig(t, fake, 2*time.Second)
		cfg.CarteraURL = closed
		down := newTestConsumos(t, tg, cfg)
		f := Factura{NumeroFactura: "F-1", MontoFacturado: decimal.RequireFromString("100"), FechaFactura: Fecha{time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}}
		_, _, err = down.Confirmar(t.Context(), ConfirmacionInput{AutorizacionID: c.AutorizacionID, Factura: f})
		if !creditsystem.IsTransport(err) || creditsystem.IsTimeout(err) {
			t.Fatalf("err = %v, want a transport error", err)
		}
		if held := (*HeldError)(nil); errors.As(err, &held) {
			t.Fatalf("err = %v is a *HeldError, but a call that never left holds nothing", err)
		}
		got, err := s.Consumo(t.Context(), c.AutorizacionID)
		if err != nil {
			t.Fatal(err)
		}
		if got.OperacionEnCurso != "" || got.ResultadoDesconocido || got.Estado != EstadoAutorizado {
			t.Fatalf("record after a refused connection: %+v", got)
		}
		if _, _, err := s.Confirmar(t.Context(), ConfirmacionInput{AutorizacionID: c.AutorizacionID, Factura: f}); err != nil {
			t.Fatalf("confirmation after the refused one: %v", err)
		}
		in, err := s.Intentos(t.Context(), c.AutorizacionID)
		if err != nil {
			t.Fatal(err)
		}
		if len(in) != 3 || in[1].Resultado != ResultadoTransporte || in[2].Resultado != ResultadoOK {
			t.Fatalf("attempts %+v, want ok, transport, ok", in)
		}
	})
}

// A call on an existing authorization whose outcome is unknown comes back as a *HeldError
// carrying the record as it was left, held by the operation, with the creditsystem's error
// still reachable.
func TestUnknownOutcomeIsAHeldError(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		migrated(t, tg)
		fake := creditsystemtest.NewServer()
		t.Cleanup(fake.Close)
		s := newTestConsumos(t, tg, fakeConfig(t, fake, 300*time.Millisecond))
		c, _, err := s.Autorizar(t.Context(), autorizacionInput("100.00"))
		if err != nil {
			t.Fatal(err)
		}
		fake.Script(UpstreamGrabarConsumo, creditsystemtest.Hang())
		f := Factura{NumeroFactura: "F-HANG", MontoFacturado: decimal.RequireFromString("100"), FechaFactura: Fecha{time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}}
		_, _, err = s.Confirmar(t.Context(), ConfirmacionInput{AutorizacionID: c.AutorizacionID, Factura: f})
		var held *HeldError
		if !errors.As(err, &held) || !creditsystem.IsTimeout(err) {
			t.Fatalf("err = %v (%T), want a *HeldError wrapping the timeout", err, err)
		}
		if errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("err = %v matches ErrOutcomeUnknown, which is the refusal of a later operation", err)
		}
		h := held.Consumo
		if h == nil || h.AutorizacionID != c.AutorizacionID || h.NumeroOperacion != c.NumeroOperacion || h.Estado != EstadoAutorizado ||
			h.OperacionEnCurso != UpstreamGrabarConsumo || !h.ResultadoDesconocido {
			t.Fatalf("held record %+v, want %s AUTORIZADO held by GrabarConsumo with an unknown outcome", h, c.AutorizacionID)
		}

		// A rejection moved nothing: the plain creditsystem error, the record released.
		c2, _, err := s.Autorizar(t.Context(), autorizacionInput("100.00"))
		if err != nil {
			t.Fatal(err)
		}
		fake.Script(UpstreamGrabarReversoAutorizacion, creditsystemtest.BusinessError(21, "bloqueada"))
		_, err = s.Reversar(t.Context(), ReversoInput{AutorizacionID: c2.AutorizacionID})
		if held := (*HeldError)(nil); err == nil || errors.As(err, &held) {
			t.Fatalf("rejected reversal: err = %v, want the creditsystem's rejection alone", err)
		}
	})
}

// The OTP bypass code reaches the creditsystem and nothing else: not the log, not the audit,
// not the error.
func TestBypassCodeStaysSecret(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		migrated(t, tg)
		fake := creditsystemtest.NewServer()
		t.Cleanup(fake.Close)
		var logs bytes.Buffer
		s := newTestConsumos(t, tg, fakeConfig(t, fake, 300*time.Millisecond),
			WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))

		_, _, err := s.Autorizar(WithRequestID(t.Context(), "req-1"), autorizacionInput(creditsystemtest.MontoTimeout.String()))
		if !creditsystem.IsTimeout(err) {
			t.Fatalf("err = %v, want a timeout", err)
		}
		if _, _, err := s.Autorizar(t.Context(), autorizacionInput("20.00")); err != nil {
			t.Fatal(err)
		}
		req, _ := fake.LastRequest("GrabarAutorizacion")
		if otp, _ := req.Field("cCodigoOtp"); otp != testBypass {
			t.Fatalf("cCodigoOtp %q, want the bypass code", otp)
		}
		if !strings.Contains(logs.String(), "req-1") || !strings.Contains(logs.String(), UpstreamGrabarAutorizacion) {
			t.Fatalf("the unknown outcome was not logged with its request id: %s", logs.String())
		}
		var audit []Intento
		if err := tg.DB.NewSelect().Model(&audit).Scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, where := range append([]string{logs.String(), err.Error()}, func() (out []string) {
			for _, in := range audit {
				out = append(out, string(in.Solicitud), string(in.Respuesta), in.MensajeUpstream)
			}
			return out
		}()...) {
			if strings.Contains(where, testBypass) {
				t.Fatalf("the bypass code leaked into %q", where)
			}
		}
	})
}

func TestReconciliarNeedsAHeldRecord(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		migrated(t, tg)
		fake := creditsystemtest.NewServer()
		t.Cleanup(fake.Close)
		s := newTestConsumos(t, tg, fakeConfig(t, fake, 2*time.Second))
		c, _, err := s.Autorizar(t.Context(), autorizacionInput("30.00"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Reconciliar(t.Context(), c.AutorizacionID, true); !errors.Is(err, ErrNothingToReconcile) {
			t.Fatalf("err = %v, want ErrNothingToReconcile", err)
		}
		if _, err := s.Reconciliar(t.Context(), "NOPE", true); !errors.Is(err, ErrAutorizacionNotFound) {
			t.Fatalf("err = %v, want ErrAutorizacionNotFound", err)
		}
	})
}

// A granted authorization whose record cannot be stored (here: a restarted fake grants an id
// already recorded) keeps the creditsystem's answer in its audited attempt, so an operator can
// find and reverse it; it used to stay "pending" without the answer.
func TestUnrecordedAuthorizationKeepsItsAudit(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		migrated(t, tg)
		first := creditsystemtest.NewServer()
		t.Cleanup(first.Close)
		c, _, err := newTestConsumos(t, tg, fakeConfig(t, first, 2*time.Second)).Autorizar(t.Context(), autorizacionInput("100.00"))
		if err != nil {
			t.Fatal(err)
		}
		restarted := creditsystemtest.NewServer()
		t.Cleanup(restarted.Close)
		s := newTestConsumos(t, tg, fakeConfig(t, restarted, 2*time.Second))
		_, _, err = s.Autorizar(WithRequestID(t.Context(), "req-dup"), autorizacionInput("100.00"))
		var unrecorded *UnrecordedError
		if !errors.As(err, &unrecorded) || !unrecorded.Duplicate || unrecorded.AutorizacionID != c.AutorizacionID ||
			unrecorded.NumeroOperacion == "" || !errors.Is(err, ErrNotRecorded) {
			t.Fatalf("err = %v, want an UnrecordedError naming the duplicate %s", err, c.AutorizacionID)
		}
		var in []Intento
		if err := tg.DB.NewSelect().Model(&in).Where("request_id = ?", "req-dup").Scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		if len(in) != 1 || in[0].Resultado != ResultadoOK || in[0].AutorizacionID != c.AutorizacionID ||
			in[0].ConsumoID != 0 || in[0].TerminadoAt.IsZero() || !bytes.Contains(in[0].Respuesta, []byte(c.AutorizacionID)) {
			t.Fatalf("audit of the granted, unrecorded authorization: %+v", in)
		}
		got, err := s.Consumo(t.Context(), c.AutorizacionID)
		if err != nil || got.ID != c.ID || got.Estado != EstadoAutorizado {
			t.Fatalf("the recorded authorization changed: %+v, %v", got, err)
		}
	})
}

// An operation the creditsystem applied but whose outcome cannot be written keeps the record
// held, flagged as an unknown outcome (later callers wait for an operator instead of retrying),
// and its audited attempt keeps the answer; it used to stay "pending", with the record "in
// progress" for ever.
func TestUnrecordedConfirmationIsHeldWithItsAnswer(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		migrated(t, tg)
		fake := creditsystemtest.NewServer()
		t.Cleanup(fake.Close)
		s := newTestConsumos(t, tg, fakeConfig(t, fake, 2*time.Second))
		c, _, err := s.Autorizar(t.Context(), autorizacionInput("100.00"))
		if err != nil {
			t.Fatal(err)
		}
		refuse := []string{`CREATE TRIGGER refuse_consumido BEFORE UPDATE OF estado ON consumos
			WHEN NEW.estado = 'CONSUMIDO' BEGIN SELECT RAISE(ABORT, 'refused'); END`}
		if tg.Name == "postgres" {
			refuse = []string{`CREATE FUNCTION refuse_consumido() RETURNS trigger AS $$
				BEGIN IF NEW.estado = 'CONSUMIDO' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END
				$$ LANGUAGE plpgsql`,
				`CREATE TRIGGER refuse_consumido BEFORE UPDATE ON consumos FOR EACH ROW EXECUTE FUNCTION refuse_consumido()`}
		}
		for _, q := range refuse {
			if _, err := tg.DB.ExecContext(t.Context(), q); err != nil {
				t.Fatal(err)
			}
		}
		f := Factura{NumeroFactura: "F-LOST", MontoFacturado: decimal.RequireFromString("100"), FechaFactura: Fecha{time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}}
		if _, _, err := s.Confirmar(t.Context(), ConfirmacionInput{AutorizacionID: c.AutorizacionID, Factura: f}); err == nil {
			t.Fatal("the confirmation was recorded despite the refusing trigger")
		}
		if n := fake.Calls("GrabarConsumo"); n != 1 {
			t.Fatalf("GrabarConsumo reached the fake %d times, want 1", n)
		}
		got, err := s.Consumo(t.Context(), c.AutorizacionID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Estado != EstadoAutorizado || got.OperacionEnCurso != UpstreamGrabarConsumo || !got.ResultadoDesconocido {
			t.Fatalf("record: estado %s marker %q unknown %v; want AUTORIZADO held by GrabarConsumo with an unknown outcome",
				got.Estado, got.OperacionEnCurso, got.ResultadoDesconocido)
		}
		in, err := s.Intentos(t.Context(), c.AutorizacionID)
		if err != nil {
			t.Fatal(err)
		}
		last := in[len(in)-1]
		if last.Operacion != UpstreamGrabarConsumo || last.Resultado != ResultadoOK || len(last.Respuesta) == 0 || last.TerminadoAt.IsZero() {
			t.Fatalf("audited confirmation %+v, want ok with the answer", last)
		}
		if _, err := s.Reversar(t.Context(), ReversoInput{AutorizacionID: c.AutorizacionID}); !errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("reverso on the held record: %v, want ErrOutcomeUnknown", err)
		}
	})
}

// Two concurrent confirmations of one authorization make exactly one GrabarConsumo; the other
// answers ErrInFlight (409). While the call is in flight its attempt is already committed,
// pending, where any connection sees it (the write-ahead attempt).
func TestTwoConfirmationsOneCall(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		store := migrated(t, tg)
		fake := creditsystemtest.NewServer()
		t.Cleanup(fake.Close)
		s := newTestConsumos(t, tg, fakeConfig(t, fake, 5*time.Second))
		c, _, err := s.Autorizar(t.Context(), autorizacionInput("100.00"))
		if err != nil {
			t.Fatal(err)
		}
		fake.Script(UpstreamGrabarConsumo, creditsystemtest.Process().After(400*time.Millisecond))
		f := Factura{NumeroFactura: "F-PAIR", MontoFacturado: decimal.RequireFromString("100"), FechaFactura: Fecha{time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}}
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				_, _, err := s.Confirmar(t.Context(), ConfirmacionInput{AutorizacionID: c.AutorizacionID, Factura: f})
				errs <- err
			}()
		}
		deadline := time.Now().Add(300 * time.Millisecond)
		for pending := false; !pending; {
			in, err := store.Intentos(t.Context(), c.AutorizacionID)
			if err != nil {
				t.Fatal(err)
			}
			last := in[len(in)-1]
			pending = last.Operacion == UpstreamGrabarConsumo && last.Resultado == ResultadoPendiente
			if !pending && time.Now().After(deadline) {
				t.Fatalf("no pending GrabarConsumo attempt committed during the call: %+v", in)
			}
			time.Sleep(5 * time.Millisecond)
		}
		var ok, inFlight int
		for range 2 {
			switch err := <-errs; {
			case err == nil:
				ok++
			case errors.Is(err, ErrInFlight):
				inFlight++
			default:
				t.Errorf("a confirmation: %v", err)
			}
		}
		if ok != 1 || inFlight != 1 || fake.Calls(UpstreamGrabarConsumo) != 1 {
			t.Fatalf("%d confirmed, %d in flight, %d GrabarConsumo calls; want 1, 1, 1", ok, inFlight, fake.Calls(UpstreamGrabarConsumo))
		}
		in, _ := store.Intentos(t.Context(), c.AutorizacionID)
		if len(in) != 2 || in[1].Resultado != ResultadoOK {
			t.Fatalf("attempts %+v; want the authorization's and one confirmation, ok", in)
		}
	})
}
