package creditsystem

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"github.com/platform/integrations/internal/sdkerr"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hooklift/gowsdl/soap"

	"github.com/platform/integrations/creditsystem/internal/cartera"
	"github.com/platform/integrations/creditsystem/internal/central"
	"github.com/platform/integrations/creditsystem/internal/xsd"
)

// Defaults of Config.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultCodigoEmpresa = "000598"
	// DefaultSOAPNamespace is the service namespace of the WSDL files (WCF's default).
	DefaultSOAPNamespace = "http://tempuri.org/"
)

// maxAnswerSize bounds an upstream answer held in memory.
const maxAnswerSize = 4 << 20

const userAgent = "platform-integrations-creditsystem/1"

// requestContentType is the Content-Type of every request (SOAP 1.1, basicHttpBinding).
const requestContentType = "text/xml; charset=utf-8"

// Config is the connection to the two WCF services. The constants Usuario, CodigoEmpresa and
// Terminal go into every request and are never taken from a caller's request.
type Config struct {
	CarteraURL string // CREDITSYSTEM_CARTERA_URL, required
	CentralURL string // CREDITSYSTEM_CENTRAL_URL, required
	// SOAPNamespace is the WCF service namespace (CREDITSYSTEM_SOAP_NAMESPACE); it names
	// the operation elements and forms SOAPAction {SOAPNamespace}/IServicioCar/<Operation>.
	// Default DefaultSOAPNamespace.
	SOAPNamespace string
	Usuario       string        // cUsuario, CREDITSYSTEM_USUARIO, required
	CodigoEmpresa string        // cCodigoEmpresa, CREDITSYSTEM_CODIGO_EMPRESA, default 000598
	Terminal      string        // cTerminal, CREDITSYSTEM_TERMINAL, required
	Timeout       time.Duration // per call, CREDITSYSTEM_TIMEOUT, default 30 s
	// OTPBypass is sent as cCodigoOtp by GrabarAutorizacion when the caller has no OTP
	// (CREDITSYSTEM_OTP_BYPASS). It is a secret: String redacts it.
	OTPBypass string
}

// String prints the configuration without the OTP bypass code.
func (c Config) String() string {
	otp := ""
	if c.OTPBypass != "" {
		otp = "[REDACTED]"
	}
	return fmt.Sprintf("{CarteraURL:%s CentralURL:%s SOAPNamespace:%s Usuario:%s CodigoEmpresa:%s Terminal:%s Timeout:%s OTPBypass:%s}",
		c.CarteraURL, c.CentralURL, c.SOAPNamespace, c.Usuario, c.CodigoEmpresa, c.Terminal, c.Timeout, otp)
}

// GoString keeps %#v from printing the OTP bypass code.
func (c Config) GoString() string { return "creditsystem.Config" + c.String() }

func (c *Config) validate() error {
	var errs []error
	for _, u := range []struct{ name, v string }{{"CarteraURL", c.CarteraURL}, {"CentralURL", c.CentralURL}} {
		p, err := url.Parse(u.v)
		if u.v == "" || err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			errs = append(errs, fmt.Errorf("the %s field must be an http(s) URL, got %q", u.name, u.v))
		}
	}
	if c.SOAPNamespace == "" {
		c.SOAPNamespace = DefaultSOAPNamespace
	}
	if c.CodigoEmpresa == "" {
		c.CodigoEmpresa = DefaultCodigoEmpresa
	}
	if c.Usuario == "" {
		errs = append(errs, errors.New("the Usuario field is required"))
	}
	if c.Terminal == "" {
		errs = append(errs, errors.New("the Terminal field is required"))
	}
	switch {
	case c.Timeout == 0:
		c.Timeout = DefaultTimeout
	case c.Timeout < 0:
		errs = append(errs, fmt.Errorf("the Timeout field must be positive, got %s", c.Timeout))
	}
	if len(errs) > 0 {
		return fmt.Errorf("creditsystem: invalid config: %w", errors.Join(errs...))
	}
	return nil
}

// Client calls the Cartera and Central services. It is safe for concurrent use.
type Client struct {
	cfg     Config
	cartera endpoint
	central endpoint
}

type endpoint struct {
	soap     *soap.Client
	portType string
}

// Option configures a Client. Options validate their argument: New fails on a bad one. A
// nil Option is ignored, so that a caller can pass an option set only in some
// configurations.
type Option func(*options) error

type options struct {
	httpClient      *http.Client
	centralContract string
}

// WithHTTPClient makes the client send through hc, for instance with a metrics RoundTripper
// (see OperationFromContext) or an httpmock transport. The per-call deadline still applies.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) error {
		if hc == nil {
			return errors.New("creditsystem: WithHTTPClient: nil *http.Client")
		}
		o.httpClient = hc
		return nil
	}
}

// DefaultCentralContract is the WCF contract name of the Central service in SOAPAction
// ({SOAPNamespace}/IServicioCentral/<Operation>), the one the Central WSDL publishes. The
// specification names only Cartera's (IServicioCar); WithCentralContract changes this one.
const DefaultCentralContract = central.WSDLPortType

// WithCentralContract sets the WCF contract name that Central's SOAPAction carries
// ({SOAPNamespace}/<name>/ConsultarAlternativaFinanciacion), default
// DefaultCentralContract, for a deployment whose Central service publishes another
// service contract name. The name must be non-empty, without slashes, quotes or spaces.
func WithCentralContract(name string) Option {
	return func(o *options) error {
		if name == "" || strings.ContainsAny(name, "/\" \t\r\n") {
			return fmt.Errorf("creditsystem: WithCentralContract: invalid contract name %q", name)
		}
		o.centralContract = name
		return nil
	}
}

// New validates cfg and the options and returns a Client. It contacts nobody.
func New(cfg Config, opts ...Option) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	o := options{centralContract: DefaultCentralContract}
	for _, opt := range opts {
		if opt == nil {
			continue // a nil Option is ignored (documented on Option)
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	hc := o.httpClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// The credit service calls one host per service; keep enough idle connections for
		// its concurrency instead of the default 2.
		tr.MaxIdleConnsPerHost = 32
		hc = &http.Client{Transport: tr}
	}
	d := doer{hc: hc}
	return &Client{
		cfg:     cfg,
		cartera: endpoint{soap: soap.NewClient(cfg.CarteraURL, soap.WithHTTPClient(d)), portType: cartera.WSDLPortType},
		central: endpoint{soap: soap.NewClient(cfg.CentralURL, soap.WithHTTPClient(d)), portType: o.centralContract},
	}, nil
}

type operationKey struct{}

// OperationFromContext returns the operation name (for example "GrabarConsumo") that the
// client stores in the context of every *http.Request it sends, so that an injected
// RoundTripper can label metrics or traces by operation. The same context carries what the
// call came to once the answer is interpreted (a refusal in lError included): read it with
// upstream.OnResult.
func OperationFromContext(ctx context.Context) (string, bool) {
	op, ok := ctx.Value(operationKey{}).(string)
	return op, ok
}

// exchange is what the doer saw of one call: gowsdl keeps the body to itself.
type exchange struct {
	status int
	body   []byte
}

type exchangeKey struct{}

// doer is the soap.HTTPClient between gowsdl and the *http.Client. gowsdl v0.5.0 sets
// Close = true on every request and closes answers without draining them, so no connection
// would ever be reused; the doer undoes the first and reads every answer to the end.
type doer struct{ hc *http.Client }

func (d doer) Do(req *http.Request) (*http.Response, error) {
	req.Close = false
	req.Header.Set("User-Agent", userAgent)
	// SOAP 1.1's media type, with the charset unquoted as WCF writes it (gowsdl quotes it).
	req.Header.Set("Content-Type", requestContentType)
	res, err := d.hc.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerSize+1))
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(body) > maxAnswerSize {
		return nil, fmt.Errorf("answer larger than %d bytes", maxAnswerSize)
	}
	if ex, ok := req.Context().Value(exchangeKey{}).(*exchange); ok {
		ex.status, ex.body = res.StatusCode, body
	}
	if err := checkShape(body); err != nil {
		return nil, err
	}
	res.Body = answerBody{bytes.NewReader(body)}
	res.ContentLength = int64(len(body))
	// gowsdl parses Content-Type to look for MTOM and fails an answer that has none, as
	// httpmock's NewStringResponder and NewBytesResponder build them; such an answer is read
	// as SOAP 1.1's text/xml. The header map is copied: httpmock shares one among the
	// answers of a responder.
	if _, _, err := mime.ParseMediaType(res.Header.Get("Content-Type")); err != nil {
		h := res.Header.Clone()
		if h == nil {
			h = http.Header{}
		}
		h.Set("Content-Type", requestContentType)
		res.Header = h
	}
	return res, nil
}

// answerBody hands the answer, read in full, back to gowsdl. It is an io.ByteReader, so that
// encoding/xml reads it without a bufio.Reader of its own (4 KiB per call).
type answerBody struct{ *bytes.Reader }

var _ io.ByteReader = answerBody{}

func (answerBody) Close() error { return nil }

// element puts a generated operation struct on the wire under the configured namespace,
// and checks on the way back that the answer is the element we asked for.
type element struct {
	name xml.Name
	v    any
	seen bool
}

func (e *element) MarshalXML(enc *xml.Encoder, _ xml.StartElement) error {
	start := xml.StartElement{Name: e.name}
	content, ok := xsd.AppendXMLContent(make([]byte, 0, 1024), e.v)
	if !ok {
		return enc.EncodeElement(e.v, start)
	}
	return enc.EncodeElement(rawContent{content}, start)
}

// rawContent is written as it is inside the element that encodes it.
type rawContent struct {
	Inner []byte `xml:",innerxml"`
}

func (e *element) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	if start.Name != e.name {
		return fmt.Errorf("answer element is {%s}%s, want {%s}%s", start.Name.Space, start.Name.Local, e.name.Space, e.name.Local)
	}
	e.seen = true
	// Members are matched by local name: WCF answers may put them under another prefix or
	// namespace than the WSDL's, and encoding/xml would skip them silently.
	return xsd.DecodeByLocalName(d, e.v, start)
}

// soapAction follows WCF: namespace, a slash unless it already ends with one, contract, operation.
func soapAction(ns, portType, op string) string {
	if !strings.HasSuffix(ns, "/") {
		ns += "/"
	}
	return ns + portType + "/" + op
}

// call sends req (a generated operation struct) and decodes into resp (its generated answer
// struct). It returns the answer bytes as received and the HTTP status, or one of the errors
// of errors.go. Business errors are the caller's to check: gowsdl reports them as success.
func (c *Client) call(ctx context.Context, ep endpoint, op string, req, resp any) ([]byte, int, error) {
	ctx = context.WithValue(ctx, operationKey{}, op)
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	ex := &exchange{}
	ctx = context.WithValue(ctx, exchangeKey{}, ex)

	in := &element{name: xml.Name{Space: c.cfg.SOAPNamespace, Local: op}, v: req}
	out := &element{name: xml.Name{Space: c.cfg.SOAPNamespace, Local: op + "Response"}, v: resp}
	// SOAP 1.1 writes SOAPAction as a quoted string, as WCF's own clients send it; gowsdl
	// sends what it is given.
	action := `"` + soapAction(c.cfg.SOAPNamespace, ep.portType, op) + `"`
	err := ep.soap.CallContext(ctx, action, in, out)
	if err != nil {
		return nil, ex.status, classify(ctx, op, ex, err)
	}
	if !out.seen {
		return nil, ex.status, &TransportError{Op: op, HTTPStatus: ex.status, Err: fmt.Errorf("answer has no %sResponse element", op)}
	}
	return ex.body, ex.status, nil
}

// classify turns what gowsdl returned into our error kinds. gowsdl v0.5.0 returns a fault in
// an HTTP 200 as *soap.SOAPFault but one in an HTTP 500 (how WCF sends them) as
// *soap.HTTPError with the body; both become *FaultError, read from the body.
func classify(ctx context.Context, op string, ex *exchange, err error) error {
	var sf *soap.SOAPFault
	var he *soap.HTTPError
	switch {
	case errors.As(err, &sf):
		if f := parseFault(op, ex.status, ex.body); f != nil {
			return f
		}
		return &FaultError{Op: op, Code: sf.Code, String: sf.String, Actor: sf.Actor, HTTPStatus: ex.status}
	case errors.As(err, &he):
		if f := parseFault(op, he.StatusCode, he.ResponseBody); f != nil {
			return f
		}
		return &TransportError{Op: op, HTTPStatus: he.StatusCode, Err: fmt.Errorf("HTTP status %d without a SOAP fault", he.StatusCode)}
	}
	err = sdkerr.RedactURLs(err)
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w: %w", cerr, err)
	}
	return &TransportError{Op: op, HTTPStatus: ex.status, Err: err}
}

type faultEnvelope struct {
	Body struct {
		Fault *struct {
			Code   string `xml:"faultcode"`
			String string `xml:"faultstring"`
			Actor  string `xml:"faultactor"`
			Detail struct {
				Inner string `xml:",innerxml"`
			} `xml:"detail"`
		} `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault"`
	} `xml:"http://schemas.xmlsoap.org/soap/envelope/ Body"`
}

const maxFaultDetail = 4 << 10

func parseFault(op string, status int, body []byte) *FaultError {
	var env faultEnvelope
	if err := xml.Unmarshal(body, &env); err != nil || env.Body.Fault == nil {
		return nil
	}
	f := env.Body.Fault
	detail := strings.TrimSpace(f.Detail.Inner)
	if len(detail) > maxFaultDetail {
		detail = detail[:maxFaultDetail]
	}
	return &FaultError{
		Op: op, Code: strings.TrimSpace(f.Code), String: strings.TrimSpace(f.String),
		Actor: strings.TrimSpace(f.Actor), Detail: detail, HTTPStatus: status,
	}
}
