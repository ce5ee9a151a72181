package creditsystem_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/creditsystem/internal/xsd"
)

func TestOperationsSuccess(t *testing.T) {
	for _, tc := range operations {
		t.Run(tc.op, func(t *testing.T) {
			srv, c := newFake(t)
			p := tc.prepare(t, t.Context(), c)
			res, err := tc.call(t.Context(), c, p)
			if err != nil {
				t.Fatalf("%s: %v", tc.op, err)
			}
			tc.check(t, res)
			raw := rawOf(t, res)
			sameJSON(t, raw)
			if len(raw.XML()) == 0 || !strings.Contains(string(raw.XML()), tc.op+"Result") {
				t.Errorf("raw XML = %q", raw.XML())
			}
			var m map[string]any
			b, err := json.Marshal(raw)
			if err != nil || json.Unmarshal(b, &m) != nil {
				t.Fatalf("raw JSON %s: %v", b, err)
			}
			if m["lError"] != false || m["nNumeroError"] != float64(0) {
				t.Errorf("raw JSON = %s", b)
			}
			if got := srv.Calls(tc.op); got != 1 {
				t.Errorf("Calls(%s) = %d, want 1", tc.op, got)
			}
		})
	}
}

func rawOf(t *testing.T, res any) creditsystem.RawAnswer {
	t.Helper()
	v := reflect.ValueOf(res).Elem().FieldByName("Raw")
	if !v.IsValid() {
		t.Fatalf("%T has no Raw", res)
	}
	return v.Interface().(creditsystem.RawAnswer)
}

func TestOperationsBusinessError(t *testing.T) {
	for _, tc := range operations {
		t.Run(tc.op, func(t *testing.T) {
			srv, c := newFake(t)
			p := tc.prepare(t, t.Context(), c)
			srv.Script(tc.op, creditsystemtest.BusinessError(51, "Cupo insuficiente"))
			res, err := tc.call(t.Context(), c, p)
			var be *creditsystem.Error
			if !errors.As(err, &be) {
				t.Fatalf("err = %v (%T), res = %v; want *creditsystem.Error", err, err, res)
			}
			want := creditsystem.Error{Op: tc.op, Code: 51, Message: "Cupo insuficiente"}
			if *be != want {
				t.Errorf("error = %+v, want %+v", *be, want)
			}
			if errors.Is(err, creditsystem.ErrCardNotFound) || creditsystem.IsTransport(err) || creditsystem.IsTimeout(err) {
				t.Errorf("business error %v matched another kind", err)
			}
			if !reflect.ValueOf(res).IsNil() {
				t.Errorf("result = %v with an error", res)
			}
		})
	}
}

func TestOperationsCardNotFound(t *testing.T) {
	for _, tc := range operations {
		t.Run(tc.op, func(t *testing.T) {
			srv, c := newFake(t)
			p := tc.prepare(t, t.Context(), c)
			srv.Script(tc.op, creditsystemtest.BusinessError(creditsystem.CodeCardNotFound, "Cliente no tiene tarjeta"))
			_, err := tc.call(t.Context(), c, p)
			if !errors.Is(err, creditsystem.ErrCardNotFound) {
				t.Fatalf("err = %v, want ErrCardNotFound", err)
			}
			var be *creditsystem.Error
			if !errors.As(err, &be) || be.Op != tc.op || be.Code != 2 {
				t.Errorf("error = %+v", be)
			}
		})
	}
}

// nNumeroError 2 means "customer without card" even when lError is not set.
func TestCardNotFoundWithoutLError(t *testing.T) {
	srv, c := newFake(t)
	body := `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><ConsultarTarjetaResponse xmlns="http://tempuri.org/">` +
		`<ConsultarTarjetaResult xmlns:a="` + operations[0].dcns + `" xmlns:i="http://www.w3.org/2001/XMLSchema-instance">` +
		`<a:cTextoError>Cliente no tiene tarjeta</a:cTextoError><a:lError>false</a:lError><a:nNumeroError>2</a:nNumeroError>` +
		`</ConsultarTarjetaResult></ConsultarTarjetaResponse></s:Body></s:Envelope>`
	srv.Script("ConsultarTarjeta", creditsystemtest.Raw(200, body))
	_, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1})
	if !errors.Is(err, creditsystem.ErrCardNotFound) {
		t.Fatalf("err = %v, want ErrCardNotFound", err)
	}
}

func TestOperationsFault(t *testing.T) {
	for _, status := range []int{http.StatusInternalServerError, http.StatusOK} {
		for _, tc := range operations {
			t.Run(fmt.Sprintf("%s/HTTP%d", tc.op, status), func(t *testing.T) {
				srv, c := newFake(t)
				p := tc.prepare(t, t.Context(), c)
				srv.Script(tc.op, creditsystemtest.Fault("a:InternalServiceFault", "Error interno").WithStatus(status))
				_, err := tc.call(t.Context(), c, p)
				var fe *creditsystem.FaultError
				if !errors.As(err, &fe) {
					t.Fatalf("err = %v (%T), want *FaultError", err, err)
				}
				if fe.Op != tc.op || fe.Code != "a:InternalServiceFault" || fe.String != "Error interno" || fe.HTTPStatus != status {
					t.Errorf("fault = %+v", fe)
				}
				if creditsystem.IsTransport(err) {
					t.Error("a fault is not a transport error")
				}
			})
		}
	}
}

func TestOperationsTimeout(t *testing.T) {
	for _, tc := range operations {
		t.Run(tc.op, func(t *testing.T) {
			t.Parallel()
			srv, c0 := newFake(t)
			p := tc.prepare(t, t.Context(), c0)
			cfg := srv.Config()
			cfg.Timeout = 150 * time.Millisecond
			c := newClient(t, cfg)
			srv.Script(tc.op, creditsystemtest.Hang())
			_, err := tc.call(t.Context(), c, p)
			if !creditsystem.IsTimeout(err) || !errors.Is(err, context.DeadlineExceeded) || !creditsystem.IsTransport(err) {
				t.Fatalf("err = %v, want a timeout", err)
			}
			var te *creditsystem.TransportError
			if !errors.As(err, &te) || te.Op != tc.op {
				t.Errorf("transport error = %+v", te)
			}
			if srv.Calls(tc.op) != 1 {
				t.Errorf("Calls = %d; a timed-out call must not be retried", srv.Calls(tc.op))
			}
		})
	}
}

func TestOperationsConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A key in the URL's userinfo or query never reaches the error, which is stored and shown.
	url := "http://cs:url-pass@" + ln.Addr().String() + "/svc?key=url-token"
	ln.Close()
	cfg := creditsystemtest.DevConfig()
	cfg.CarteraURL, cfg.CentralURL, cfg.Timeout = url, url, time.Second
	c := newClient(t, cfg)
	for _, tc := range operations {
		t.Run(tc.op, func(t *testing.T) {
			_, err := tc.call(t.Context(), c, prepared{autorizacion: "AUT0000001", numeroOperacion: 1})
			var te *creditsystem.TransportError
			if !errors.As(err, &te) || te.Op != tc.op || !errors.Is(err, syscall.ECONNREFUSED) {
				t.Fatalf("err = %v, want a refused connection wrapped with the operation", err)
			}
			if creditsystem.IsTimeout(err) {
				t.Error("a refused connection is not a timeout")
			}
			if strings.Contains(err.Error(), "url-token") || strings.Contains(err.Error(), "url-pass") {
				t.Errorf("the URL's secrets reach the error: %q", err)
			}
		})
	}
}

// nilAnswer writes an answer of op whose members are all xsi:nil (or empty, when empty is
// true) except the error triple, which says success.
func nilAnswer(tc opCase, empty bool) string {
	resultField := reflect.TypeOf(tc.result).Elem().Field(1) // after XMLName; an xsd.Ptr
	rt := resultField.Type.Field(0).Type.Elem()
	var b strings.Builder
	b.WriteString(`<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><` + tc.op + `Response xmlns="http://tempuri.org/"><` +
		tc.op + `Result xmlns:a="` + tc.dcns + `" xmlns:i="http://www.w3.org/2001/XMLSchema-instance">`)
	for i := 0; i < rt.NumField(); i++ {
		tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("xml"), ",")
		_, local, _ := strings.Cut(tag, " ")
		switch {
		case local == "lError":
			b.WriteString(`<a:lError>false</a:lError>`)
		case local == "nNumeroError":
			b.WriteString(`<a:nNumeroError>0</a:nNumeroError>`)
		case empty && rt.Field(i).Type.Kind() != reflect.Bool:
			b.WriteString(`<a:` + local + `/>`)
		default:
			b.WriteString(`<a:` + local + ` i:nil="true"/>`)
		}
	}
	b.WriteString(`</` + tc.op + `Result></` + tc.op + `Response></s:Body></s:Envelope>`)
	return b.String()
}

// Translation rule 5: xsi:nil and empty nodes become nil, never zero values.
func TestOperationsNilAnswers(t *testing.T) {
	for _, empty := range []bool{false, true} {
		for _, tc := range operations {
			name := tc.op + "/xsi:nil"
			if empty {
				name = tc.op + "/empty"
			}
			t.Run(name, func(t *testing.T) {
				srv, c := newFake(t)
				p := tc.prepare(t, t.Context(), c)
				srv.Script(tc.op, creditsystemtest.Raw(200, nilAnswer(tc, empty)))
				res, err := tc.call(t.Context(), c, p)
				if err != nil {
					t.Fatal(err)
				}
				v := reflect.ValueOf(res).Elem()
				for i := 0; i < v.NumField(); i++ {
					f, name := v.Field(i), v.Type().Field(i).Name
					switch f.Kind() {
					case reflect.Pointer, reflect.Slice:
						if !f.IsNil() {
							t.Errorf("%s = %v, want nil", name, f.Interface())
						}
					case reflect.Bool:
						if f.Bool() {
							t.Errorf("%s = true", name)
						}
					}
				}
				b, _ := json.Marshal(rawOf(t, res))
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				for k, val := range m {
					if k != "lError" && k != "nNumeroError" && val != nil && val != false {
						t.Errorf("raw JSON %s = %v, want null", k, val)
					}
				}
			})
		}
	}
}

// The fake writes xsi:nil only on members the WSDL declares nillable, but a real server may
// still send it on any member (nNumeroOperacion, nPagoContado of an error answer, as the fake
// once did): the client reads such an error answer as the business error it is.
func TestErrorAnswersWithNilOnEveryMember(t *testing.T) {
	for _, tc := range operations {
		t.Run(tc.op, func(t *testing.T) {
			srv, c := newFake(t)
			p := tc.prepare(t, t.Context(), c)
			body := strings.NewReplacer(`<a:lError>false</a:lError>`, `<a:lError>true</a:lError>`,
				`<a:nNumeroError>0</a:nNumeroError>`, `<a:nNumeroError>99</a:nNumeroError>`,
				`<a:cTextoError i:nil="true"/>`, `<a:cTextoError>Rechazada</a:cTextoError>`).Replace(nilAnswer(tc, false))
			srv.Script(tc.op, creditsystemtest.Raw(200, body))
			_, err := tc.call(t.Context(), c, p)
			var be *creditsystem.Error
			if !errors.As(err, &be) || be.Code != 99 || be.Message != "Rechazada" {
				t.Fatalf("err = %v, want the business error 99", err)
			}
		})
	}
}

func TestNilResultIsTransportError(t *testing.T) {
	srv, c := newFake(t)
	body := `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><ConsultarTarjetaResponse xmlns="http://tempuri.org/">` +
		`<ConsultarTarjetaResult i:nil="true" xmlns:i="http://www.w3.org/2001/XMLSchema-instance"/></ConsultarTarjetaResponse></s:Body></s:Envelope>`
	srv.Script("ConsultarTarjeta", creditsystemtest.Raw(200, body))
	_, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1})
	if !creditsystem.IsTransport(err) {
		t.Fatalf("err = %v, want a transport error", err)
	}
}

func TestUndecodableAnswers(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
	}{
		{"html error page", 502, "<html><body>Bad gateway</body></html>"},
		{"html with 200", 200, "<html><body>maintenance</body></html>"},
		{"truncated envelope", 200, `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><ConsultarTarjetaResponse xmlns="http://tempuri.org/">`},
		{"empty body", 200, ""},
		{"other operation's answer", 200, `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><GrabarConsumoResponse xmlns="http://tempuri.org/"/></s:Body></s:Envelope>`},
		{"answer in another namespace", 200, `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><ConsultarTarjetaResponse xmlns="http://other.example/"/></s:Body></s:Envelope>`},
		{"empty SOAP body", 200, `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body/></s:Envelope>`},
		{"exponent in a decimal", 200, `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><ConsultarTarjetaResponse xmlns="http://tempuri.org/"><ConsultarTarjetaResult xmlns:a="` + operations[0].dcns + `"><a:oTipoCupoVm><a:TipoCupoVm><a:nCupoAsignado>1e+06</a:nCupoAsignado></a:TipoCupoVm></a:oTipoCupoVm></ConsultarTarjetaResult></ConsultarTarjetaResponse></s:Body></s:Envelope>`},
	}
	cases = append(cases, hostileAnswers()...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newFake(t)
			srv.Script("ConsultarTarjeta", creditsystemtest.Raw(tc.status, tc.body))
			_, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1})
			var te *creditsystem.TransportError
			if !errors.As(err, &te) || te.Op != "ConsultarTarjeta" || te.HTTPStatus != tc.status {
				t.Fatalf("err = %v (%T), want a transport error with HTTP %d", err, err, tc.status)
			}
		})
	}
}

// hostileAnswers are answers of almost 4 MiB shaped to make encoding/xml hold a record per
// element or attribute: well over 100 MB of heap per call before the client bounded their
// depth and width.
func hostileAnswers() []struct {
	name   string
	status int
	body   string
} {
	const size = 4<<20 - 1024
	open := `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><ConsultarTarjetaResponse xmlns="http://tempuri.org/"><ConsultarTarjetaResult>`
	return []struct {
		name   string
		status int
		body   string
	}{
		{"nested a million deep", 200, open + strings.Repeat("<a>", size/3)},
		{"nested a million deep in an HTTP 500", 500, `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><detail>` + strings.Repeat("<a>", size/3)},
		{"an element with 700000 attributes", 200, open + "<a" + strings.Repeat(` x="1"`, size/6) + "/>"},
		{"an element with 700000 attributes in an HTTP 500", 500, "<a" + strings.Repeat(` x="1"`, size/6) + "/>"},
	}
}

func TestHostileAnswersBoundedMemory(t *testing.T) {
	const limit = 32 << 20 // the answer itself is read into memory, growing to 4 MiB
	for _, tc := range hostileAnswers() {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			hc := &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: tc.status, Header: http.Header{"Content-Type": {"text/xml; charset=utf-8"}},
					Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
			})}
			cfg := creditsystemtest.DevConfig()
			cfg.CarteraURL, cfg.CentralURL = "http://creditsystem.invalid/c", "http://creditsystem.invalid/c"
			c := newClient(t, cfg, creditsystem.WithHTTPClient(hc))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1})
			runtime.ReadMemStats(&after)
			if !creditsystem.IsTransport(err) {
				t.Errorf("err = %v, want a transport error", err)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > limit {
				t.Errorf("a %d-byte answer allocated %d MiB, limit %d MiB", len(body), got>>20, limit>>20)
			}
		})
	}
}

// Answers built with httpmock's NewStringResponder carry no Content-Type, which gowsdl
// failed with "mime: no media type"; they are read as text/xml.
func TestAnswerWithoutContentType(t *testing.T) {
	const ok = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><ConsultarTarjetaResponse xmlns="http://tempuri.org/">` +
		`<ConsultarTarjetaResult xmlns:a="http://schemas.datacontract.org/2004/07/CreditSystem.Cartera.Modelos" xmlns:i="http://www.w3.org/2001/XMLSchema-instance">` +
		`<a:cCliente>CLIENTE UNO</a:cCliente><a:cTextoError i:nil="true"/><a:lError>false</a:lError><a:nNumeroError>0</a:nNumeroError>` +
		`</ConsultarTarjetaResult></ConsultarTarjetaResponse></s:Body></s:Envelope>`
	const cardNotFound = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><ConsultarTarjetaResponse xmlns="http://tempuri.org/">` +
		`<ConsultarTarjetaResult xmlns:a="http://schemas.datacontract.org/2004/07/CreditSystem.Cartera.Modelos">` +
		`<a:cTextoError>Cliente no tiene tarjeta</a:cTextoError><a:lError>true</a:lError><a:nNumeroError>2</a:nNumeroError>` +
		`</ConsultarTarjetaResult></ConsultarTarjetaResponse></s:Body></s:Envelope>`
	const fault = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><faultcode>s:Client</faultcode><faultstring>boom</faultstring></s:Fault></s:Body></s:Envelope>`
	cases := []struct {
		name      string
		responder httpmock.Responder
		check     func(t *testing.T, res *creditsystem.ConsultarTarjetaResponse, err error)
	}{
		{"success", httpmock.NewStringResponder(200, ok), func(t *testing.T, res *creditsystem.ConsultarTarjetaResponse, err error) {
			if err != nil || res.Cliente == nil || *res.Cliente != "CLIENTE UNO" {
				t.Errorf("res = %+v, err = %v", res, err)
			}
		}},
		{"invalid Content-Type", httpmock.NewStringResponder(200, ok).HeaderSet(http.Header{"Content-Type": {"text/xml;;"}}), func(t *testing.T, res *creditsystem.ConsultarTarjetaResponse, err error) {
			if err != nil || res.Cliente == nil {
				t.Errorf("res = %+v, err = %v", res, err)
			}
		}},
		{"card not found", httpmock.NewStringResponder(200, cardNotFound), func(t *testing.T, _ *creditsystem.ConsultarTarjetaResponse, err error) {
			if !errors.Is(err, creditsystem.ErrCardNotFound) {
				t.Errorf("err = %v, want ErrCardNotFound", err)
			}
		}},
		{"fault in HTTP 200", httpmock.NewStringResponder(200, fault), func(t *testing.T, _ *creditsystem.ConsultarTarjetaResponse, err error) {
			var fe *creditsystem.FaultError
			if !errors.As(err, &fe) || fe.String != "boom" || fe.HTTPStatus != 200 {
				t.Errorf("err = %v, want *FaultError", err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mt := httpmock.NewMockTransport()
			mt.RegisterResponder(http.MethodPost, "http://creditsystem.example/cartera", tc.responder)
			cfg := creditsystemtest.DevConfig()
			cfg.CarteraURL, cfg.CentralURL = "http://creditsystem.example/cartera", "http://creditsystem.example/central"
			c := newClient(t, cfg, creditsystem.WithHTTPClient(&http.Client{Transport: mt}))
			// Concurrent calls share the responder's answer header: -race checks that the
			// client does not write to it.
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					res, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1})
					tc.check(t, res, err)
				})
			}
			wg.Wait()
		})
	}
}

func TestDroppedConnection(t *testing.T) {
	srv, c := newFake(t)
	srv.Script("GrabarAutorizacion", creditsystemtest.Drop())
	_, err := c.GrabarAutorizacion(t.Context(), creditsystem.GrabarAutorizacionRequest{Identificacion: ident1, Monto: dec("10.00"), Plazo: 1})
	if !creditsystem.IsTransport(err) || creditsystem.IsTimeout(err) {
		t.Fatalf("err = %v, want a transport error that is not a timeout", err)
	}
	if srv.Calls("GrabarAutorizacion") != 1 {
		t.Errorf("Calls = %d; the client must not retry a money-moving call", srv.Calls("GrabarAutorizacion"))
	}
}

func TestDeadline(t *testing.T) {
	t.Run("configured timeout", func(t *testing.T) {
		srv, _ := newFake(t)
		cfg := srv.Config()
		cfg.Timeout = 7 * time.Second
		var deadline time.Time
		hc := &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			deadline, _ = r.Context().Deadline()
			return http.DefaultTransport.RoundTrip(r)
		})}
		c := newClient(t, cfg, creditsystem.WithHTTPClient(hc))
		before := time.Now()
		if _, err := c.ConsultarTarjeta(context.Background(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1}); err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		if deadline.Before(before.Add(cfg.Timeout)) || deadline.After(after.Add(cfg.Timeout)) {
			t.Errorf("deadline %v is not call start + %v (call between %v and %v)", deadline, cfg.Timeout, before, after)
		}
	})
	t.Run("sooner context deadline wins", func(t *testing.T) {
		srv, _ := newFake(t)
		cfg := srv.Config()
		cfg.Timeout = time.Minute
		var deadline time.Time
		hc := &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			deadline, _ = r.Context().Deadline()
			return http.DefaultTransport.RoundTrip(r)
		})}
		c := newClient(t, cfg, creditsystem.WithHTTPClient(hc))
		want := time.Now().Add(5 * time.Second)
		ctx, cancel := context.WithDeadline(t.Context(), want)
		defer cancel()
		if _, err := c.ConsultarTarjeta(ctx, creditsystem.ConsultarTarjetaRequest{Identificacion: ident1}); err != nil {
			t.Fatal(err)
		}
		if !deadline.Equal(want) {
			t.Errorf("deadline = %v, want the context's %v", deadline, want)
		}
	})
	t.Run("default is 30 s", func(t *testing.T) {
		srv, _ := newFake(t)
		cfg := srv.Config()
		cfg.Timeout = 0
		var deadline time.Time
		hc := &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			deadline, _ = r.Context().Deadline()
			return http.DefaultTransport.RoundTrip(r)
		})}
		c := newClient(t, cfg, creditsystem.WithHTTPClient(hc))
		before := time.Now()
		if _, err := c.ConsultarTarjeta(context.Background(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1}); err != nil {
			t.Fatal(err)
		}
		if d := deadline.Sub(before); d < 30*time.Second || d > 31*time.Second {
			t.Errorf("deadline in %v, want 30 s", d)
		}
	})
}

func TestCallerCancellationIsTransportNotTimeout(t *testing.T) {
	srv, c := newFake(t)
	srv.Script("ConsultarTarjeta", creditsystemtest.Hang())
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for srv.Calls("ConsultarTarjeta") == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err := c.ConsultarTarjeta(ctx, creditsystem.ConsultarTarjetaRequest{Identificacion: ident1})
	if !creditsystem.IsTransport(err) || creditsystem.IsTimeout(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a cancelled transport error", err)
	}
}

func TestOperationFromContext(t *testing.T) {
	srv, _ := newFake(t)
	var seen []string
	hc := &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		op, ok := creditsystem.OperationFromContext(r.Context())
		if !ok {
			t.Errorf("request for %s carries no operation", r.Header.Get("SOAPAction"))
		}
		if !strings.HasSuffix(r.Header.Get("SOAPAction"), "/"+op+`"`) {
			t.Errorf("operation %q for SOAPAction %q", op, r.Header.Get("SOAPAction"))
		}
		seen = append(seen, op)
		return http.DefaultTransport.RoundTrip(r)
	})}
	c := newClient(t, srv.Config(), creditsystem.WithHTTPClient(hc))
	var want []string
	for _, tc := range operations {
		seen = nil
		p := tc.prepare(t, t.Context(), c)
		if _, err := tc.call(t.Context(), c, p); err != nil {
			t.Fatalf("%s: %v", tc.op, err)
		}
		want = append(want, tc.op)
		if seen[len(seen)-1] != tc.op {
			t.Errorf("last operation seen = %q, want %q", seen[len(seen)-1], tc.op)
		}
	}
	if len(want) != 9 {
		t.Errorf("covered %d operations", len(want))
	}
	if _, ok := creditsystem.OperationFromContext(context.Background()); ok {
		t.Error("a plain context carries an operation")
	}
}

func TestSOAPAction(t *testing.T) {
	cases := []struct{ ns, want string }{
		{"http://tempuri.org/", "http://tempuri.org/IServicioCar/ConsultarTarjeta"},
		{"http://creditsystem.example/cartera", "http://creditsystem.example/cartera/IServicioCar/ConsultarTarjeta"},
	}
	for _, tc := range cases {
		t.Run(tc.ns, func(t *testing.T) {
			srv, _ := newFake(t, creditsystemtest.WithNamespace(tc.ns))
			c := newClient(t, srv.Config())
			if _, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1}); err != nil {
				t.Fatal(err)
			}
			r, _ := srv.LastRequest("ConsultarTarjeta")
			if r.SOAPAction != tc.want {
				t.Errorf("SOAPAction = %q, want %q", r.SOAPAction, tc.want)
			}
			if !strings.Contains(string(r.Body), `<ConsultarTarjeta xmlns="`+tc.ns+`">`) {
				t.Errorf("operation element not in %s: %s", tc.ns, r.Body)
			}
		})
	}
	t.Run("central", func(t *testing.T) {
		srv, c := newFake(t)
		if _, err := operations[1].call(t.Context(), c, prepared{}); err != nil {
			t.Fatal(err)
		}
		r, _ := srv.LastRequest("ConsultarAlternativaFinanciacion")
		if r.SOAPAction != "http://tempuri.org/IServicioCentral/ConsultarAlternativaFinanciacion" {
			t.Errorf("SOAPAction = %q", r.SOAPAction)
		}
	})
	t.Run("namespace mismatch is a fault", func(t *testing.T) {
		srv, _ := newFake(t, creditsystemtest.WithNamespace("http://vendor.example/"))
		cfg := srv.Config()
		cfg.SOAPNamespace = "http://tempuri.org/"
		c := newClient(t, cfg)
		_, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1})
		var fe *creditsystem.FaultError
		if !errors.As(err, &fe) || fe.Code != "a:ActionNotSupported" || fe.HTTPStatus != 500 {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestTranslationRules(t *testing.T) {
	field := func(t *testing.T, srv *creditsystemtest.Server, op, name string) (string, bool) {
		t.Helper()
		r, ok := srv.LastRequest(op)
		if !ok {
			t.Fatalf("no %s request", op)
		}
		return r.Field(name)
	}
	t.Run("card number falls back to identificacion", func(t *testing.T) {
		srv, c := newFake(t)
		if _, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1}); err != nil {
			t.Fatal(err)
		}
		if v, _ := field(t, srv, "ConsultarTarjeta", "cNumeroTarjeta"); v != ident1 {
			t.Errorf("cNumeroTarjeta = %q, want the identificacion", v)
		}
		if _, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1, NumeroTarjeta: card1}); err != nil {
			t.Fatal(err)
		}
		if v, _ := field(t, srv, "ConsultarTarjeta", "cNumeroTarjeta"); v != card1 {
			t.Errorf("cNumeroTarjeta = %q, want the card", v)
		}
		if _, err := c.GrabarAutorizacion(t.Context(), creditsystem.GrabarAutorizacionRequest{Identificacion: ident1, Monto: dec("1"), Plazo: 1}); err != nil {
			t.Fatal(err)
		}
		if v, _ := field(t, srv, "GrabarAutorizacion", "cNumeroTarjeta"); v != ident1 {
			t.Errorf("authorization cNumeroTarjeta = %q, want the identificacion", v)
		}
	})
	t.Run("authorization without OTP sends the bypass code", func(t *testing.T) {
		srv, c := newFake(t)
		if _, err := c.GrabarAutorizacion(t.Context(), creditsystem.GrabarAutorizacionRequest{Identificacion: ident1, Monto: dec("1"), Plazo: 1}); err != nil {
			t.Fatal(err)
		}
		if v, _ := field(t, srv, "GrabarAutorizacion", "cCodigoOtp"); v != creditsystemtest.DevOTPBypass {
			t.Errorf("cCodigoOtp = %q, want the bypass code", v)
		}
		if _, err := c.GrabarAutorizacion(t.Context(), creditsystem.GrabarAutorizacionRequest{Identificacion: ident1, Monto: dec("1"), Plazo: 1, Otp: "775533"}); err != nil {
			t.Fatal(err)
		}
		if v, _ := field(t, srv, "GrabarAutorizacion", "cCodigoOtp"); v != "775533" {
			t.Errorf("cCodigoOtp = %q, want the caller's OTP", v)
		}
	})
	t.Run("confirmation without OTP sends 0", func(t *testing.T) {
		srv, c := newFake(t)
		consume(t, t.Context(), c, authorize(t, t.Context(), c, "10.00"), "10.00")
		if v, _ := field(t, srv, "GrabarConsumo", "cCodigoOtp"); v != "0" {
			t.Errorf("cCodigoOtp = %q, want 0", v)
		}
	})
	t.Run("constants come from the configuration", func(t *testing.T) {
		srv, _ := newFake(t)
		cfg := srv.Config()
		cfg.Usuario, cfg.CodigoEmpresa, cfg.Terminal = "USRX", "000777", "CAJA-09"
		c := newClient(t, cfg)
		for _, tc := range operations {
			p := tc.prepare(t, t.Context(), c)
			if _, err := tc.call(t.Context(), c, p); err != nil {
				t.Fatalf("%s: %v", tc.op, err)
			}
			r, _ := srv.LastRequest(tc.op)
			want := map[string]string{"cUsuario": "USRX", "cCodigoEmpresa": "000777", "cTerminal": "CAJA-09"}
			if tc.op == "ConsultarDeudaTarjeta" {
				delete(want, "cTerminal") // not part of that request
			}
			for k, v := range want {
				if r.Fields[k] != v {
					t.Errorf("%s %s = %q, want %q", tc.op, k, r.Fields[k], v)
				}
			}
		}
	})
	t.Run("reverso consumo sends the invoice and lAjusteConciliacion false", func(t *testing.T) {
		srv, c := newFake(t)
		consume(t, t.Context(), c, authorize(t, t.Context(), c, "10.00"), "10.00")
		if _, err := c.GrabarReversoConsumo(t.Context(), creditsystem.GrabarReversoConsumoRequest{NumeroReferencia: factura, Identificacion: card1}); err != nil {
			t.Fatal(err)
		}
		r, _ := srv.LastRequest("GrabarReversoConsumo")
		if r.Fields["cNumeroReferencia"] != factura || r.Fields["lAjusteConciliacion"] != "false" || r.Fields["cNumeroTarjeta"] != card1 {
			t.Errorf("fields = %v", r.Fields)
		}
	})
	t.Run("optional empty values are not sent", func(t *testing.T) {
		srv, c := newFake(t)
		if _, err := c.GrabarAutorizacion(t.Context(), creditsystem.GrabarAutorizacionRequest{Identificacion: ident1, Monto: dec("1"), Plazo: 1}); err != nil {
			t.Fatal(err)
		}
		r, _ := srv.LastRequest("GrabarAutorizacion")
		for _, k := range []string{"cCodigoTipoCupo", "nCuotaInicial", "cPuntoVenta"} {
			if _, ok := r.Fields[k]; ok {
				t.Errorf("%s sent although empty", k)
			}
		}
		if _, ok := r.Lists["iArticuloVm"]; ok {
			t.Error("empty article list sent")
		}
		if r.Fields["lGarantiaExtendida"] != "false" {
			t.Errorf("lGarantiaExtendida = %q, want false", r.Fields["lGarantiaExtendida"])
		}
	})
	t.Run("debt needs an identifier", func(t *testing.T) {
		srv, c := newFake(t)
		_, err := c.ConsultarDeudaTarjeta(t.Context(), creditsystem.ConsultarDeudaTarjetaRequest{})
		if !errors.Is(err, creditsystem.ErrInvalidRequest) || srv.Calls("ConsultarDeudaTarjeta") != 0 {
			t.Errorf("err = %v, calls = %d", err, srv.Calls("ConsultarDeudaTarjeta"))
		}
		if _, err := c.ConsultarDeudaTarjeta(t.Context(), creditsystem.ConsultarDeudaTarjetaRequest{NumeroIdentificacion: ident1}); err != nil {
			t.Fatal(err)
		}
		r, _ := srv.LastRequest("ConsultarDeudaTarjeta")
		if _, ok := r.Fields["cNumeroTarjeta"]; ok || r.Fields["cNumeroIdentificacion"] != ident1 {
			t.Errorf("fields = %v", r.Fields)
		}
	})
}

func TestMoneyOnTheWire(t *testing.T) {
	srv, c := newFake(t)
	if _, err := operations[2].call(t.Context(), c, prepared{}); err != nil {
		t.Fatal(err)
	}
	r, _ := srv.LastRequest("GrabarAutorizacion")
	if r.Fields["nMonto"] != "1000000.00" || r.Fields["nCuotaInicial"] != "0.01" || r.Lists["iArticuloVm"][0]["nPrecio"] != "500000.00" {
		t.Errorf("money on the wire: nMonto %q nCuotaInicial %q nPrecio %q", r.Fields["nMonto"], r.Fields["nCuotaInicial"], r.Lists["iArticuloVm"][0]["nPrecio"])
	}
	if strings.Contains(string(r.Body), "e+") {
		t.Errorf("exponent on the wire: %s", r.Body)
	}
	// More decimal places than two are kept exactly.
	if got := xsd.FormatDecimal(dec("0.015")); got != "0.015" {
		t.Errorf("FormatDecimal(0.015) = %s", got)
	}
}

func TestNew(t *testing.T) {
	valid := creditsystemtest.DevConfig()
	valid.CarteraURL, valid.CentralURL = "http://cartera.local/svc", "https://central.local/svc"
	cases := []struct {
		name    string
		mutate  func(*creditsystem.Config)
		opts    []creditsystem.Option
		wantErr string
	}{
		{"valid", func(*creditsystem.Config) {}, nil, ""},
		{"missing cartera URL", func(c *creditsystem.Config) { c.CarteraURL = "" }, nil, "CarteraURL"},
		{"relative central URL", func(c *creditsystem.Config) { c.CentralURL = "/svc" }, nil, "CentralURL"},
		{"ftp URL", func(c *creditsystem.Config) { c.CarteraURL = "ftp://x/y" }, nil, "CarteraURL"},
		{"missing usuario", func(c *creditsystem.Config) { c.Usuario = "" }, nil, "Usuario"},
		{"missing terminal", func(c *creditsystem.Config) { c.Terminal = "" }, nil, "Terminal"},
		{"negative timeout", func(c *creditsystem.Config) { c.Timeout = -time.Second }, nil, "Timeout"},
		{"nil http client", func(*creditsystem.Config) {}, []creditsystem.Option{creditsystem.WithHTTPClient(nil)}, "nil *http.Client"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := valid
			tc.mutate(&cfg)
			_, err := creditsystem.New(cfg, tc.opts...)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("New: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("New error = %v, want it to mention %s", err, tc.wantErr)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	srv, _ := newFake(t)
	cfg := srv.Config()
	cfg.CodigoEmpresa, cfg.SOAPNamespace = "", ""
	c := newClient(t, cfg)
	if _, err := c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1}); err != nil {
		t.Fatal(err)
	}
	r, _ := srv.LastRequest("ConsultarTarjeta")
	if r.Fields["cCodigoEmpresa"] != "000598" || !strings.HasPrefix(r.SOAPAction, "http://tempuri.org/") {
		t.Errorf("defaults: empresa %q action %q", r.Fields["cCodigoEmpresa"], r.SOAPAction)
	}
}

func TestConfigStringRedactsOTPBypass(t *testing.T) {
	cfg := creditsystemtest.DevConfig()
	cfg.OTPBypass = "S3CR3T-OTP"
	for _, s := range []string{cfg.String(), fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg)} {
		if strings.Contains(s, "S3CR3T-OTP") || !strings.Contains(s, "REDACTED") {
			t.Errorf("config printed as %s", s)
		}
	}
}

func TestErrorMessages(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&creditsystem.Error{Op: "GrabarAutorizacion", Code: 51, Message: "Cupo insuficiente"}, "creditsystem: GrabarAutorizacion: error 51: Cupo insuficiente"},
		{&creditsystem.FaultError{Op: "GrabarConsumo", Code: "a:InternalServiceFault", String: "boom", HTTPStatus: 500}, "creditsystem: GrabarConsumo: SOAP fault a:InternalServiceFault (HTTP 500): boom"},
		{&creditsystem.TransportError{Op: "ConsultarTarjeta", Err: context.DeadlineExceeded}, "creditsystem: ConsultarTarjeta: context deadline exceeded"},
		{&creditsystem.TransportError{Op: "ConsultarTarjeta", HTTPStatus: 502, Err: errors.New("HTTP status 502 without a SOAP fault")}, "creditsystem: ConsultarTarjeta: HTTP 502: HTTP status 502 without a SOAP fault"},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	if errors.Is(&creditsystem.Error{Code: 3}, creditsystem.ErrCardNotFound) {
		t.Error("code 3 matched ErrCardNotFound")
	}
	// IsTimeout is about the SDK's calls: a deadline that no call reported is not one.
	if !creditsystem.IsTimeout(fmt.Errorf("wrapped: %w", &creditsystem.TransportError{Op: "ConsultarTarjeta", Err: context.DeadlineExceeded})) ||
		creditsystem.IsTimeout(fmt.Errorf("wrapped: %w", context.DeadlineExceeded)) || creditsystem.IsTimeout(errors.New("x")) {
		t.Error("IsTimeout is not upstream.IsTimeout")
	}
}
