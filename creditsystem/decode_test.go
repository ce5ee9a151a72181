package creditsystem_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/creditsystem/internal/cartera"
)

// cardAnswer is a ConsultarTarjeta answer whose result members are written with prefix p
// (empty: no prefix) and whose result element carries the extra namespace declarations decl.
func cardAnswer(p, decl, lError, numero string) string {
	q := func(local string) string {
		if p == "" {
			return local
		}
		return p + ":" + local
	}
	el := func(local, v string) string { return "<" + q(local) + ">" + v + "</" + q(local) + ">" }
	return `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><ConsultarTarjetaResponse xmlns="http://tempuri.org/">` +
		`<ConsultarTarjetaResult ` + decl + ` xmlns:i="http://www.w3.org/2001/XMLSchema-instance">` +
		el("cCliente", "CLIENTE UNO") + el("cNumeroTarjeta", card1) + el("cTextoError", "Cupo insuficiente") +
		el("dFechaActivacion", "2024-03-10T00:00:00") + "<" + q("dFechaUltimaCompra") + ` i:nil="true"/>` +
		el("lError", lError) + el("nNumeroError", numero) +
		"<" + q("oTipoCupoVm") + "><" + q("TipoCupoVm") + ">" + el("cCodigoTipoCupo", "001") + el("nCupoDisponible", "4500.00") +
		"<" + q("oTipoOperacionVm") + "><" + q("TipoOperacionVm") + ">" + el("cCodigoTipoOperacion", "001") + el("nCupoDisponibleOpe", "4500.00") +
		"</" + q("TipoOperacionVm") + "></" + q("oTipoOperacionVm") + ">" +
		"</" + q("TipoCupoVm") + "></" + q("oTipoCupoVm") + ">" +
		`</ConsultarTarjetaResult></ConsultarTarjetaResponse></s:Body></s:Envelope>`
}

// WCF answers do not always put DataContract members in the WSDL's namespace (another
// DataContract namespace, no namespace at all, the service namespace inherited from the
// operation element). Members are matched by local name: none is dropped, and above all an
// lError = true is never lost, which would turn a refusal into a success.
func TestAnswerMembersByLocalName(t *testing.T) {
	dcns := cartera.WSDLDataContractNamespace
	cases := []struct {
		name   string
		prefix string
		decl   string
	}{
		{"WSDL namespace under prefix a", "a", `xmlns:a="` + dcns + `"`},
		{"WSDL namespace under another prefix", "b", `xmlns:b="` + dcns + `"`},
		{"another DataContract namespace", "a", `xmlns:a="http://schemas.datacontract.org/2004/07/CreditSystem.Cartera.Modelos.V2"`},
		{"empty namespace", "", `xmlns=""`},
		{"service namespace inherited from the operation element", "", ``},
		{"default namespace of another URI", "", `xmlns="urn:vendor:cartera"`},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/success", func(t *testing.T) {
			srv, c := newFake(t)
			srv.Script("ConsultarTarjeta", creditsystemtest.Raw(200, cardAnswer(tc.prefix, tc.decl, "false", "0")))
			r, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1})
			if err != nil {
				t.Fatal(err)
			}
			if r.Cliente == nil || *r.Cliente != "CLIENTE UNO" || r.NumeroTarjeta == nil || *r.NumeroTarjeta != card1 ||
				r.FechaActivacion.String() != "2024-03-10" || r.FechaUltimaCompra != nil {
				t.Errorf("card = %+v", r)
			}
			if len(r.Cupos) != 1 || r.Cupos[0].CodigoTipoCupo == nil || *r.Cupos[0].CodigoTipoCupo != "001" ||
				r.Cupos[0].CupoDisponible == nil || r.Cupos[0].CupoDisponible.String() != "4500" ||
				len(r.Cupos[0].Operaciones) != 1 || r.Cupos[0].Operaciones[0].CupoDisponibleOpe == nil {
				t.Errorf("cupos = %+v", r.Cupos)
			}
			if raw := string(mustJSON(t, r.Raw)); !strings.Contains(raw, `"cCliente":"CLIENTE UNO"`) {
				t.Errorf("raw JSON = %s", raw)
			}
		})
		t.Run(tc.name+"/business error", func(t *testing.T) {
			srv, c := newFake(t)
			srv.Script("ConsultarTarjeta", creditsystemtest.Raw(200, cardAnswer(tc.prefix, tc.decl, "true", "51")))
			_, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1})
			var be *creditsystem.Error
			if !errors.As(err, &be) || be.Code != 51 || be.Message != "Cupo insuficiente" {
				t.Fatalf("err = %v, want business error 51", err)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// resultAnswer writes an answer of op whose result element is inner (the whole element,
// or nothing when inner is empty).
func resultAnswer(tc opCase, inner string) []byte {
	return []byte(`<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><` + tc.op + `Response xmlns="http://tempuri.org/">` +
		inner + `</` + tc.op + `Response></s:Body></s:Envelope>`)
}

// A result is nil only when its element is xsi:nil, absent or empty (translation rule 5);
// a result whose members all hold zero values (lError false, everything else nil) is an
// answer, not a missing one.
func TestResultNilOnlyWhenNilAbsentOrEmpty(t *testing.T) {
	open := func(tc opCase) string {
		return `<` + tc.op + `Result xmlns:a="` + tc.dcns + `" xmlns:i="http://www.w3.org/2001/XMLSchema-instance">`
	}
	cases := []struct {
		name      string
		result    func(tc opCase) string
		wantValue bool
	}{
		{"lError false and every other member nil", func(tc opCase) string {
			b := nilAnswer(tc, false)
			return strings.Replace(b, `<a:nNumeroError>0</a:nNumeroError>`, `<a:nNumeroError i:nil="true"/>`, 1)
		}, true},
		{"only lError false", func(tc opCase) string {
			return open(tc) + `<a:lError>false</a:lError></` + tc.op + `Result>`
		}, true},
		{"xsi:nil", func(tc opCase) string {
			return `<` + tc.op + `Result i:nil="true" xmlns:i="http://www.w3.org/2001/XMLSchema-instance"/>`
		}, false},
		{"absent", func(opCase) string { return "" }, false},
		{"empty element", func(tc opCase) string { return `<` + tc.op + `Result/>` }, false},
		{"element with blanks only", func(tc opCase) string { return open(tc) + "\n  </" + tc.op + `Result>` }, false},
	}
	for _, tc := range cases {
		for _, oc := range operations {
			t.Run(tc.name+"/"+oc.op, func(t *testing.T) {
				srv, c := newFake(t)
				p := oc.prepare(t, t.Context(), c)
				body := tc.result(oc)
				if !strings.HasPrefix(body, "<s:Envelope") {
					body = string(resultAnswer(oc, body))
				}
				srv.Script(oc.op, creditsystemtest.Raw(200, body))
				res, err := oc.call(t.Context(), c, p)
				if tc.wantValue {
					if err != nil || reflect.ValueOf(res).IsNil() {
						t.Fatalf("res = %v, err = %v; want an answer", res, err)
					}
					return
				}
				var te *creditsystem.TransportError
				if !errors.As(err, &te) || !strings.Contains(te.Error(), "nil or missing result") {
					t.Fatalf("err = %v, want the nil-result transport error", err)
				}
			})
		}
	}
}

// Translation rule 1 on ConsultarTarjeta: cNumeroTarjeta is the card when given, otherwise the
// identification, and the identification always goes as cNumeroIdentificacion.
func TestConsultarTarjetaIdentificacion(t *testing.T) {
	cases := []struct {
		name               string
		req                creditsystem.ConsultarTarjetaRequest
		wantTarjeta        string
		wantIdentificacion string // "" means not sent
	}{
		{"identificacion only", creditsystem.ConsultarTarjetaRequest{Identificacion: ident1}, ident1, ident1},
		{"card and identificacion", creditsystem.ConsultarTarjetaRequest{Identificacion: ident1, NumeroTarjeta: card1}, card1, ident1},
		{"card only", creditsystem.ConsultarTarjetaRequest{NumeroTarjeta: card1}, card1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newFake(t)
			if _, err := c.ConsultarTarjeta(t.Context(), tc.req); err != nil {
				t.Fatal(err)
			}
			r, _ := srv.LastRequest("ConsultarTarjeta")
			if got := r.Fields["cNumeroTarjeta"]; got != tc.wantTarjeta {
				t.Errorf("cNumeroTarjeta = %q, want %q", got, tc.wantTarjeta)
			}
			got, sent := r.Field("cNumeroIdentificacion")
			if got != tc.wantIdentificacion || sent != (tc.wantIdentificacion != "") {
				t.Errorf("cNumeroIdentificacion = %q (sent %t), want %q", got, sent, tc.wantIdentificacion)
			}
		})
	}
}
