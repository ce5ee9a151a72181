package creditsystem_test

// Tests for the known defects of gowsdl v0.5.0, each showing the defect on gowsdl's own
// runtime and then that the client handles it.

import (
	"bytes"
	"encoding/xml"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hooklift/gowsdl/soap"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/creditsystem/internal/cartera"
	"github.com/platform/integrations/creditsystem/internal/central"
	"github.com/platform/integrations/creditsystem/internal/codegen"
	"github.com/platform/integrations/creditsystem/internal/xsd"
)

// countingServer serves the fake and counts accepted TCP connections.
func countingServer(t *testing.T) (*httptest.Server, *creditsystemtest.Fake, *atomic.Int64) {
	t.Helper()
	h := creditsystemtest.NewFake()
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(func() { h.Close(); ts.Close() })
	return ts, h, &conns
}

// nsElement puts a generated operation struct in the WSDL's service namespace, which the
// post-processor leaves to run time, for calling gowsdl's runtime directly.
type nsElement struct{ v any }

func (e nsElement) MarshalXML(enc *xml.Encoder, _ xml.StartElement) error {
	name := reflect.TypeOf(e.v).Elem().Name()
	return enc.EncodeElement(e.v, xml.StartElement{Name: xml.Name{Space: cartera.WSDLNamespace, Local: name}})
}

func inNamespace(v any) nsElement { return nsElement{v} }

// gowsdl v0.5.0 sets Close = true on every request: each call opens a connection.
func TestGowsdlDefectEveryRequestCloses(t *testing.T) {
	ts, _, conns := countingServer(t)
	var closed int
	hc := &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		if r.Close {
			closed++
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	sc := soap.NewClient(ts.URL, soap.WithHTTPClient(hc))
	for range 3 {
		out := &cartera.ConsultarTarjetaResponse{}
		in := &cartera.ConsultarTarjeta{OSolicitud: xsd.NewPtr(&cartera.SolicitudConsultarTarjetaVm{
			CCodigoEmpresa: xsd.NewString("000598"), CNumeroTarjeta: xsd.NewString(card1),
			CTerminal: xsd.NewString("T"), CUsuario: xsd.NewString("U"),
		})}
		if err := sc.Call("http://tempuri.org/IServicioCar/ConsultarTarjeta", inNamespace(in), out); err != nil {
			t.Fatal(err)
		}
	}
	if closed != 3 || conns.Load() != 3 {
		t.Errorf("gowsdl: %d requests with Close, %d connections; the defect is gone, revisit the doer", closed, conns.Load())
	}
}

// The client undoes it: 100 sequential calls use exactly one TCP connection.
func TestConnectionReuse(t *testing.T) {
	cases := []struct {
		name string
		opts func(ts *httptest.Server) []creditsystem.Option
	}{
		{"default transport", func(*httptest.Server) []creditsystem.Option { return nil }},
		{"injected client", func(ts *httptest.Server) []creditsystem.Option {
			return []creditsystem.Option{creditsystem.WithHTTPClient(ts.Client())}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts, _, conns := countingServer(t)
			cfg := creditsystemtest.DevConfig()
			cfg.CarteraURL, cfg.CentralURL = ts.URL+creditsystemtest.CarteraPath, ts.URL+creditsystemtest.CentralPath
			c := newClient(t, cfg, tc.opts(ts)...)
			for i := range 100 {
				var err error
				if i%10 == 9 {
					_, err = operations[1].call(t.Context(), c, prepared{}) // Central, same host
				} else {
					_, err = c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1})
				}
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("100 sequential calls opened %d TCP connections, want 1", n)
			}
		})
	}
	t.Run("after business errors and faults", func(t *testing.T) {
		ts, h, conns := countingServer(t)
		cfg := creditsystemtest.DevConfig()
		cfg.CarteraURL, cfg.CentralURL = ts.URL, ts.URL
		c := newClient(t, cfg)
		for i := range 100 {
			switch i % 3 {
			case 1:
				h.Script("ConsultarTarjeta", creditsystemtest.BusinessError(51, "x"))
			case 2:
				h.Script("ConsultarTarjeta", creditsystemtest.Fault("a:InternalServiceFault", "x"))
			}
			_, _ = c.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1})
		}
		if n := conns.Load(); n != 1 {
			t.Errorf("100 calls with errors opened %d TCP connections, want 1", n)
		}
	})
}

// gowsdl v0.5.0 returns a WCF fault (HTTP 500) as *soap.HTTPError, not as a fault.
func TestGowsdlDefectFaultIn500(t *testing.T) {
	ts, h, _ := countingServer(t)
	h.Script("ConsultarTarjeta", creditsystemtest.Fault("a:InternalServiceFault", "boom"), creditsystemtest.Fault("a:InternalServiceFault", "boom"))
	sc := soap.NewClient(ts.URL)
	err := sc.Call("http://tempuri.org/IServicioCar/ConsultarTarjeta", inNamespace(&cartera.ConsultarTarjeta{}), &cartera.ConsultarTarjetaResponse{})
	var he *soap.HTTPError
	var sf *soap.SOAPFault
	if !errors.As(err, &he) || errors.As(err, &sf) {
		t.Errorf("gowsdl returned %T; the defect is gone, revisit classify", err)
	}

	cfg := creditsystemtest.DevConfig()
	cfg.CarteraURL, cfg.CentralURL = ts.URL, ts.URL
	_, err = newClient(t, cfg).ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1})
	var fe *creditsystem.FaultError
	if !errors.As(err, &fe) || fe.HTTPStatus != 500 || fe.String != "boom" {
		t.Errorf("client returned %v, want *FaultError", err)
	}
}

// gowsdl v0.5.0 reports lError = true in an HTTP 200 as success.
func TestGowsdlDefectBusinessErrorIsSuccess(t *testing.T) {
	ts, h, _ := countingServer(t)
	h.Script("ConsultarTarjeta", creditsystemtest.BusinessError(51, "Cupo insuficiente"), creditsystemtest.BusinessError(51, "Cupo insuficiente"))
	sc := soap.NewClient(ts.URL)
	in := &cartera.ConsultarTarjeta{}
	out := &cartera.ConsultarTarjetaResponse{}
	if err := sc.Call("http://tempuri.org/IServicioCar/ConsultarTarjeta", inNamespace(in), out); err != nil || !out.ConsultarTarjetaResult.V.LError {
		t.Errorf("gowsdl: err %v; the defect is gone", err)
	}
	cfg := creditsystemtest.DevConfig()
	cfg.CarteraURL, cfg.CentralURL = ts.URL, ts.URL
	_, err := newClient(t, cfg).ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1})
	var be *creditsystem.Error
	if !errors.As(err, &be) || be.Code != 51 {
		t.Errorf("client returned %v, want *creditsystem.Error", err)
	}
}

// gowsdl maps xs:decimal to float64, which encoding/xml writes as 1e+06.
func TestGowsdlDefectFloatMoney(t *testing.T) {
	type gowsdlStyle struct {
		NMonto float64 `xml:"nMonto"`
	}
	b, _ := xml.Marshal(gowsdlStyle{NMonto: 1000000})
	if !bytes.Contains(b, []byte("1e+06")) {
		t.Errorf("float64 wrote %s; the defect is gone", b)
	}
	type ours struct {
		NMonto xsd.Decimal `xml:"nMonto"`
	}
	for _, tc := range []struct{ in, want string }{{"1000000", "1000000.00"}, {"1000000.00", "1000000.00"}, {"0.01", "0.01"}, {"-12.5", "-12.50"}, {"0.001", "0.001"}} {
		b, err := xml.Marshal(ours{NMonto: xsd.NewDecimal(dec(tc.in))})
		if err != nil || string(b) != "<ours><nMonto>"+tc.want+"</nMonto></ours>" {
			t.Errorf("%s wrote %s (%v), want %s", tc.in, b, err, tc.want)
		}
	}
}

// gowsdl's *string and *float64 decode xsi:nil and empty elements to pointers to zero.
func TestGowsdlDefectNilDecodesToZero(t *testing.T) {
	const body = `<r xmlns:i="http://www.w3.org/2001/XMLSchema-instance"><s i:nil="true"/><d i:nil="true"/><e/></r>`
	var g struct {
		S *string  `xml:"s"`
		D *float64 `xml:"d"`
		E *string  `xml:"e"`
	}
	if err := xml.Unmarshal([]byte(body), &g); err != nil || g.S == nil || g.D == nil || g.E == nil {
		t.Errorf("gowsdl-style decode: %+v %v; the defect is gone", g, err)
	}
	var o struct {
		S xsd.String  `xml:"s"`
		D xsd.Decimal `xml:"d"`
		E xsd.String  `xml:"e"`
	}
	if err := xml.Unmarshal([]byte(body), &o); err != nil || o.S.Ptr() != nil || o.D.Ptr() != nil || o.E.Ptr() != nil {
		t.Errorf("xsd decode: %+v %v", o, err)
	}
}

// gowsdl writes DataContract members without their namespace; the post-processed code puts
// every member of the request DataContract in the DataContract namespace, and the operation
// element and its parameter in the configured service namespace.
func TestDataContractNamespaces(t *testing.T) {
	for _, tc := range operations {
		t.Run(tc.op, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "golden", tc.op+".request.xml"))
			if err != nil {
				t.Fatal(err)
			}
			d := xml.NewDecoder(bytes.NewReader(body))
			depth := 0
			for {
				tok, err := d.Token()
				if err != nil {
					break
				}
				switch se := tok.(type) {
				case xml.StartElement:
					depth++
					var want string
					switch {
					case depth <= 2:
						want = "http://schemas.xmlsoap.org/soap/envelope/"
					case depth <= 4: // operation element, oSolicitud
						want = "http://tempuri.org/"
					default:
						want = tc.dcns
					}
					if se.Name.Space != want {
						t.Errorf("<%s> at depth %d in %q, want %q", se.Name.Local, depth, se.Name.Space, want)
					}
				case xml.EndElement:
					depth--
				}
			}
		})
	}
}

// WCF orders DataContract members by ordinal comparison of their names (no explicit Order in
// these contracts): the WSDL sequences must be sorted that way and the generated structs must
// keep the WSDL order, since encoding/xml writes fields in struct order.
func TestWCFMemberOrder(t *testing.T) {
	roots := map[string][]any{
		"wsdl/cartera.wsdl": {
			cartera.ConsultarTarjeta{}, cartera.ConsultarTarjetaResponse{}, cartera.GrabarAutorizacion{}, cartera.GrabarAutorizacionResponse{},
			cartera.GrabarConsumo{}, cartera.GrabarConsumoResponse{}, cartera.GrabarReversoAutorizacion{}, cartera.GrabarReversoAutorizacionResponse{},
			cartera.GrabarReversoConsumo{}, cartera.GrabarReversoConsumoResponse{}, cartera.ConsultarDeudaTarjeta{}, cartera.ConsultarDeudaTarjetaResponse{},
			cartera.GrabarPagoTarjeta{}, cartera.GrabarPagoTarjetaResponse{}, cartera.GrabarReversoPagoTarjeta{}, cartera.GrabarReversoPagoTarjetaResponse{},
		},
		"wsdl/central.wsdl": {central.ConsultarAlternativaFinanciacion{}, central.ConsultarAlternativaFinanciacionResponse{}},
	}
	for file, rs := range roots {
		t.Run(file, func(t *testing.T) {
			types := map[string]reflect.Type{}
			var walk func(reflect.Type)
			walk = func(rt reflect.Type) {
				for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice {
					rt = rt.Elem()
				}
				if rt.Kind() != reflect.Struct || types[rt.Name()] != nil || rt.PkgPath() == "encoding/xml" {
					return
				}
				if strings.HasPrefix(rt.Name(), "Ptr[") {
					walk(rt.Field(0).Type)
					return
				}
				types[rt.Name()] = rt
				for i := 0; i < rt.NumField(); i++ {
					walk(rt.Field(i).Type)
				}
			}
			for _, r := range rs {
				walk(reflect.TypeOf(r))
			}
			for name, seq := range dataContractSequences(t, file) {
				if !slices.IsSorted(seq) {
					t.Errorf("%s: WSDL sequence %v is not in WCF (ordinal) order", name, seq)
				}
				rt, ok := types[name]
				if !ok {
					t.Errorf("%s: no generated type reachable from the operations", name)
					continue
				}
				var fields []string
				for i := 0; i < rt.NumField(); i++ {
					tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("xml"), ",")
					_, local, _ := strings.Cut(tag, " ")
					fields = append(fields, local)
				}
				if !slices.Equal(fields, seq) {
					t.Errorf("%s: generated order %v, WSDL order %v", name, fields, seq)
				}
			}
		})
	}
}

func dataContractSequences(t *testing.T, file string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TargetNamespace string `xml:"targetNamespace,attr"`
		Schemas         []struct {
			TargetNamespace string `xml:"targetNamespace,attr"`
			ComplexTypes    []struct {
				Name     string `xml:"name,attr"`
				Elements []struct {
					Name string `xml:"name,attr"`
				} `xml:"sequence>element"`
			} `xml:"complexType"`
		} `xml:"types>schema"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, s := range doc.Schemas {
		if s.TargetNamespace == doc.TargetNamespace || s.TargetNamespace == codegen.SerializationNamespace {
			continue
		}
		for _, ct := range s.ComplexTypes {
			for _, e := range ct.Elements {
				out[ct.Name] = append(out[ct.Name], e.Name)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no DataContract types", file)
	}
	return out
}

// go generate must reproduce the committed generated code byte for byte. The generator runs
// as its own process: it pins one P (see internal/cmd/generate), which a test binary must not.
func TestGeneratedCodeIsFresh(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to run the generator: %v", err)
	}
	for _, name := range []string{"cartera", "central"} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), name+".go")
			cmd := exec.CommandContext(t.Context(), goCmd, "run", "./internal/cmd/generate",
				"-wsdl", filepath.Join("wsdl", name+".wsdl"), "-pkg", name, "-out", out)
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("generate: %v\n%s", err, msg)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("internal", name, name+".go"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("internal/%s/%s.go is stale: run go generate ./creditsystem/...", name, name)
			}
		})
	}
}
