package creditsystemtest

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem/creditsystemtest/internal/wcf"
	"github.com/platform/integrations/creditsystem/internal/cartera"
	"github.com/platform/integrations/creditsystem/internal/central"
)

// Magic values: a request carrying one gets the outcome its name says, from any HTTP client,
// without scripting. Each is named after the member it goes in.
const (
	// IdentificacionCardNotFound, as cNumeroIdentificacion or cNumeroTarjeta, answers
	// nNumeroError 2 (customer without card).
	IdentificacionCardNotFound = "0000000002"
	// OTPInvalid as cCodigoOtp of GrabarConsumo answers lError true, nNumeroError 60.
	OTPInvalid = "000000"
	// NumeroFacturaFault as cNumeroFactura of GrabarConsumo answers a SOAP fault in an
	// HTTP 500.
	NumeroFacturaFault = "FAULT-500"
	// MotivoReversoFault as cMotivoReverso of GrabarReversoPagoTarjeta answers a SOAP fault in
	// an HTTP 500; nothing is reversed.
	MotivoReversoFault = "FAULT-500"
)

var (
	// MontoInsufficientCredit as nMonto of GrabarAutorizacion answers lError true,
	// nNumeroError 51.
	MontoInsufficientCredit = decimal.RequireFromString("666.66")
	// MontoTimeout as nMonto of GrabarAutorizacion never answers; nothing is recorded.
	MontoTimeout = decimal.RequireFromString("504.04")
	// ValorPagoRejected as nValorPago of GrabarPagoTarjeta answers lError true, nNumeroError
	// CodePaymentRejected (74); nothing is applied.
	ValorPagoRejected = decimal.RequireFromString("666.66")
	// ValorPagoTimeout as nValorPago of GrabarPagoTarjeta never answers; nothing is applied.
	ValorPagoTimeout = decimal.RequireFromString("504.04")
	// ValorPagoLateSuccess as nValorPago of GrabarPagoTarjeta is applied (when the rules allow
	// it) and never answered: the caller times out on a payment that went through.
	ValorPagoLateSuccess = decimal.RequireFromString("504.05")
)

// DefaultCreditLine is the credit line of every card the fake opens.
var DefaultCreditLine = decimal.RequireFromString("5000.00")

// Paths of the two services, as in the WSDL addresses. A request on CarteraPath for a Central
// operation (or the other way round) gets WCF's ActionNotSupported fault; any other path
// serves both services.
const (
	CarteraPath = "/Cartera/ServicioCar.svc"
	CentralPath = "/Central/ServicioCentral.svc"
)

// Option configures a Fake. A nil Option is ignored, as the clients' New does.
type Option func(*Fake)

// WithNamespace sets the SOAP namespace the fake expects (default the WSDL's,
// http://tempuri.org/); it must match the client's Config.SOAPNamespace.
func WithNamespace(ns string) Option { return func(f *Fake) { f.ns = ns } }

// WithCentralContract sets the WCF contract name the fake expects in Central's SOAPAction
// (default IServicioCentral, the WSDL's); it must match the client's
// creditsystem.WithCentralContract.
func WithCentralContract(name string) Option { return func(f *Fake) { f.centralContract = name } }

// WithClock sets the fake's clock (dates of cards, tables and overdue installments).
func WithClock(now func() time.Time) Option { return func(f *Fake) { f.now = now } }

// WithCreditLine sets the credit line of the cards the fake opens (default 5000.00).
func WithCreditLine(d decimal.Decimal) Option { return func(f *Fake) { f.line = d } }

// WithFirstAuthorization makes the fake number its authorizations from n (default 1:
// AUT0000001, AUT0000002, ...). A fake in front of a database that outlives it (a development
// service restarted on its SQLite file) starts from a number no earlier run used, for example
// the Unix time in seconds, so a new authorization never repeats an autorizacion_id the database
// already holds. Such a fake also adopts what an earlier run recorded, so that a flow survives a
// restart: GrabarConsumo or GrabarReversoAutorizacion on an id below n takes it as a live
// authorization of the request's card (nMonto, nPlazo from the request), and
// GrabarReversoConsumo of an unknown invoice succeeds instead of answering 23.
func WithFirstAuthorization(n int) Option { return func(f *Fake) { f.firstAuth = n } }

// WithFixedCreditLines makes every card keep its whole credit line: no operation consumes it
// (and none restores it), so a development setup or a test suite can reuse one card number for
// any number of operations. Every ConsultarTarjeta shows the full line available (5000.00 by
// default); every GrabarAutorizacion is checked against the full line alone (an amount above it
// still answers nNumeroError 51, as does MontoInsufficientCredit); an answer that reports the
// line after an operation shows the full line minus that operation's own amount
// (GrabarConsumo: the invoiced amount) or the full line after a payment. Debts, tables,
// payments and reversals work as usual: only the line ignores them. Card then always shows
// Utilizado 0. Without this option (the default) authorizations, consumptions and payments
// move the line as the package documentation describes.
func WithFixedCreditLines() Option { return func(f *Fake) { f.fixedLines = true } }

// Fake is the fake creditsystem, an http.Handler without a listener, for a service that
// runs it on a real listener in development mode. Tests usually want NewServer. Safe for
// concurrent use.
type Fake struct {
	ns              string
	centralContract string
	now             func() time.Time
	line            decimal.Decimal
	firstAuth       int
	fixedLines      bool

	mu      sync.Mutex
	bank    *bank
	scripts map[string][]Reaction
	calls   map[string]int
	last    map[string]Request

	closed    chan struct{}
	closeOnce sync.Once
}

// NewFake returns a fake with no cards yet; every card is opened on first use.
func NewFake(opts ...Option) *Fake {
	f := &Fake{
		ns:              cartera.WSDLNamespace,
		centralContract: central.WSDLPortType,
		now:             time.Now,
		line:            DefaultCreditLine,
		scripts:         map[string][]Reaction{},
		calls:           map[string]int{},
		last:            map[string]Request{},
		closed:          make(chan struct{}),
	}
	for _, o := range opts {
		if o != nil {
			o(f)
		}
	}
	f.bank = newBank(f.now, f.line, f.fixedLines)
	if f.firstAuth > 0 {
		f.bank.seqAuth = f.firstAuth - 1
		f.bank.adoptBelow = f.firstAuth
	}
	return f
}

// Namespace returns the SOAP namespace the fake expects.
func (f *Fake) Namespace() string { return f.ns }

// Close releases the requests held by Hang, LateSuccess, After or MontoTimeout.
func (f *Fake) Close() { f.closeOnce.Do(func() { close(f.closed) }) }

// Operations lists every operation the fake serves.
func Operations() []string {
	ops := append(slices.Clone(cartera.WSDLOperations), central.WSDLOperations...)
	slices.Sort(ops)
	return ops
}

// Script queues reactions for the next calls of op, one per call, ahead of the normal
// behaviour (which includes the magic values). It panics on an unknown operation.
func (f *Fake) Script(op string, reactions ...Reaction) {
	if _, _, ok := wcf.Service(op); !ok {
		panic(fmt.Sprintf("creditsystemtest: Script: unknown operation %q", op))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scripts[op] = append(f.scripts[op], reactions...)
}

// Calls returns how many requests for op reached the fake, whatever it did with them.
func (f *Fake) Calls(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// LastRequest returns the last request received for op.
func (f *Fake) LastRequest(op string) (Request, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.last[op]
	if ok && r.Fields == nil {
		// Flattened here, not on every call: the development service runs the fake in its
		// process under load, and only tests read the members.
		r.Fields, r.Lists = flatten(r.Body)
		f.last[op] = r
	}
	return r, ok
}

// Card is a snapshot of a card's credit line.
type Card struct {
	Numero         string
	Identificacion string
	Asignado       decimal.Decimal
	Utilizado      decimal.Decimal
	Disponible     decimal.Decimal
}

// Card returns the state of the card with that number or identification, if it was opened.
func (f *Fake) Card(numeroOIdentificacion string) (Card, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.bank.cards[numeroOIdentificacion]
	if !ok {
		return Card{}, false
	}
	return Card{Numero: c.numero, Identificacion: c.identificacion, Asignado: c.asignado, Utilizado: c.utilizado, Disponible: c.disponible()}, true
}

const maxRequest = 1 << 20

func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST a SOAP 1.1 envelope", http.StatusMethodNotAllowed)
		return
	}
	action := strings.Trim(r.Header.Get("SOAPAction"), `"`)
	op := ""
	if i := strings.LastIndexByte(action, '/'); i >= 0 {
		op = action[i+1:]
	}
	portType, dcns, known := wcf.Service(op)
	contract := portType
	if portType == central.WSDLPortType {
		contract = f.centralContract
	}
	if !known || action != wcf.SOAPAction(f.ns, contract, op) || !f.pathServes(r.URL.Path, portType) {
		var buf bytes.Buffer
		wcf.WriteActionNotSupported(&buf, action)
		f.write(w, http.StatusInternalServerError, buf.Bytes())
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest))
	if err != nil {
		drop(w)
		return
	}
	f.mu.Lock()
	f.calls[op]++
	f.last[op] = Request{Operation: op, SOAPAction: action, Header: r.Header.Clone(), Body: body}
	react := Process()
	if q := f.scripts[op]; len(q) > 0 {
		react, f.scripts[op] = q[0], q[1:]
	}
	f.mu.Unlock()

	// The wait ignores the caller, as a slow creditsystem would; only Close ends it.
	if react.after > 0 && !f.wait(context.WithoutCancel(r.Context()), react.after) {
		drop(w)
		return
	}
	switch react.kind {
	case kindBusinessError:
		f.answer(w, dcns, op, f.errorResult(op, react.code, react.message))
	case kindFault:
		f.fault(w, react.status, react.fault, react.message)
	case kindDrop:
		drop(w)
	case kindHang:
		f.hold(w, r)
	case kindRaw:
		f.write(w, react.status, []byte(react.body))
	case kindLateSuccess:
		f.process(op, body)
		f.hold(w, r)
	default:
		res := f.process(op, body)
		switch {
		case res.hang:
			f.hold(w, r)
		case res.fault != "":
			f.fault(w, res.status, res.fault, res.faultMsg)
		default:
			f.answer(w, dcns, op, res.result)
		}
	}
}

func (f *Fake) pathServes(path, portType string) bool {
	switch {
	case strings.EqualFold(path, CarteraPath):
		return portType == cartera.WSDLPortType
	case strings.EqualFold(path, CentralPath):
		return portType == central.WSDLPortType
	}
	return true
}

// wait holds a request for d (forever when d < 0); it reports whether d elapsed with the
// caller still there.
func (f *Fake) wait(ctx context.Context, d time.Duration) bool {
	var timer <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-timer:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	case <-f.closed:
		return false
	}
}

// hold never answers: it returns when the caller gives up, and drops the connection when
// the fake is closed first, so that no empty answer goes out.
func (f *Fake) hold(w http.ResponseWriter, r *http.Request) {
	f.wait(r.Context(), -1)
	f.release(w, r)
}

func (f *Fake) release(w http.ResponseWriter, r *http.Request) {
	if r.Context().Err() == nil {
		drop(w)
	}
}

func drop(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func (f *Fake) answer(w http.ResponseWriter, dcns, op string, result any) {
	var buf bytes.Buffer
	writeAnswer(&buf, f.ns, dcns, op, result)
	f.write(w, http.StatusOK, buf.Bytes())
}

func (f *Fake) fault(w http.ResponseWriter, status int, code, msg string) {
	var buf bytes.Buffer
	wcf.WriteFault(&buf, code, msg)
	f.write(w, status, buf.Bytes())
}

func (f *Fake) write(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", wcf.ContentType)
	w.WriteHeader(status)
	w.Write(body)
}

// result is what processing a request produced.
type result struct {
	result   any // the generated Respuesta...Vm
	hang     bool
	fault    string
	faultMsg string
	status   int
}

func (f *Fake) process(op string, body []byte) result {
	spec := specs[op]
	req := spec.newRequest()
	if err := decodeRequest(body, xml.Name{Space: f.ns, Local: op}, req); err != nil {
		return result{fault: "a:DeserializationFailed", status: http.StatusInternalServerError,
			faultMsg: "The formatter threw an exception while trying to deserialize the message: " + err.Error()}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := spec.handle(f.bank, req)
	if out.biz != nil {
		return result{result: f.errorResult(op, out.biz.code, out.biz.msg)}
	}
	return result{result: out.result, hang: out.hang, fault: out.fault, faultMsg: out.faultMsg, status: http.StatusInternalServerError}
}
