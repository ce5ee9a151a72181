package consumption

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestTransiciones walks every (state, trigger) pair against the specification's rules:
// /otp only from AUTORIZADO; /confirmar from AUTORIZADO or OTP_RECIBIDO; /reverso not from
// CONSUMIDO, REVERSADO (nor the final CONSUMO_REVERSADO); /reverso-consumo only from CONSUMIDO.
func TestTransiciones(t *testing.T) {
	estados := []Estado{EstadoAutorizado, EstadoOTPRecibido, EstadoConsumido, EstadoReversado, EstadoConsumoReversado}
	permitidas := map[Operacion]map[Estado]Estado{
		OpOTP:            {EstadoAutorizado: EstadoOTPRecibido},
		OpConfirmar:      {EstadoAutorizado: EstadoConsumido, EstadoOTPRecibido: EstadoConsumido},
		OpReverso:        {EstadoAutorizado: EstadoReversado, EstadoOTPRecibido: EstadoReversado},
		OpReversoConsumo: {EstadoConsumido: EstadoConsumoReversado},
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for op, destinos := range permitidas {
		for _, e := range estados {
			t.Run(string(op)+" from "+string(e), func(t *testing.T) {
				c := &Consumo{AutorizacionID: "AUT-9", Estado: e, NumeroFactura: "F-1"}
				var err error
				switch op {
				case OpOTP:
					err = c.RegistrarOTP("123456", now)
				default:
					if err = c.IniciarOperacion(op, now); err == nil {
						err = completarCon(c, op, now)
					}
				}
				want, allowed := destinos[e]
				if !allowed {
					var se *StateError
					if !errors.As(err, &se) || !errors.Is(err, ErrInvalidState) {
						t.Fatalf("err = %v, want a StateError", err)
					}
					if !strings.Contains(err.Error(), "AUT-9") || !strings.Contains(err.Error(), string(e)) {
						t.Fatalf("message %q must name the authorization and the state", err)
					}
					if c.Estado != e {
						t.Fatalf("state changed to %s on a refused transition", c.Estado)
					}
					return
				}
				if err != nil {
					t.Fatalf("err = %v, want %s", err, want)
				}
				if c.Estado != want || c.OperacionEnCurso != "" {
					t.Fatalf("state %s marker %q, want %s and no marker", c.Estado, c.OperacionEnCurso, want)
				}
			})
		}
	}
}

func completarCon(c *Consumo, op Operacion, now time.Time) error {
	switch op {
	case OpConfirmar:
		return c.Confirmar(Factura{NumeroFactura: "F-2"}, "", nil, now)
	case OpReverso:
		return c.Reversar(now)
	case OpReversoConsumo:
		return c.ReversarConsumo(now)
	}
	return nil
}

func TestHeldRecordRefusesEveryOperation(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, unknown := range []bool{false, true} {
		c := &Consumo{AutorizacionID: "AUT-7", Estado: EstadoAutorizado}
		if err := c.IniciarOperacion(OpConfirmar, now); err != nil {
			t.Fatal(err)
		}
		want := ErrInFlight
		if unknown {
			c.MarcarResultadoDesconocido(now)
			want = ErrOutcomeUnknown
		}
		for _, op := range []Operacion{OpOTP, OpConfirmar, OpReverso} {
			var err error
			if op == OpOTP {
				err = c.RegistrarOTP("1", now)
			} else {
				err = c.IniciarOperacion(op, now)
			}
			if !errors.Is(err, want) || !strings.Contains(err.Error(), UpstreamGrabarConsumo) {
				t.Fatalf("unknown=%v %s: err = %v, want %v naming GrabarConsumo", unknown, op, err, want)
			}
		}
	}
}

func TestReversoConsumoNeedsInvoice(t *testing.T) {
	c := &Consumo{AutorizacionID: "AUT-5", Estado: EstadoConsumido}
	err := c.IniciarOperacion(OpReversoConsumo, time.Now())
	if !errors.Is(err, ErrNoInvoice) || !errors.Is(err, ErrInvalidState) {
		t.Fatalf("err = %v, want ErrNoInvoice", err)
	}
}

func TestCompletingWithoutMarkerFails(t *testing.T) {
	c := &Consumo{AutorizacionID: "AUT-4", Estado: EstadoAutorizado}
	if err := c.Reversar(time.Now()); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("err = %v, want ErrNotHeld", err)
	}
}

func TestFecha(t *testing.T) {
	cases := map[string]struct {
		in   string
		ok   bool
		want string
	}{
		"valid":      {"2026-02-28", true, "2026-02-28"},
		"not a date": {"2026-02-30", false, ""},
		"slashes":    {"28/02/2026", false, ""},
		"empty":      {"", false, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := ParseFecha(tc.in)
			if (err == nil) != tc.ok || f.String() != tc.want {
				t.Fatalf("ParseFecha(%q) = %q, %v", tc.in, f, err)
			}
		})
	}
}
