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

	"github.com/platform/integrations/creditsystem/internal/cartera"
	"github.com/platform/integrations/creditsystem/internal/central"
)

// Magic values (see the package documentation).
const (
	// MagicCardNotFound, as identificacion or card number, answers nNumeroError 2.
	MagicCardNotFound = "0000000002"
	// MagicInvalidOTP as cCodigoOtp of GrabarConsumo answers lError true, invalid OTP.
	MagicInvalidOTP = "000000"
	// MagicFaultInvoice as cNumeroFactura of GrabarConsumo answers a SOAP fault in an HTTP 500.
	MagicFaultInvoice = "FAULT-500"
)

var (
	// MagicInsufficientCredit as the amount of GrabarAutorizacion answers lError true,
	// nNumeroError 51.
	MagicInsufficientCredit = decimal.RequireFromString("666.66")
	// MagicTimeout as the amount of GrabarAutorizacion never answers.
	MagicTimeout = decimal.RequireFromString("504.04")
	// DefaultCreditLine is the credit line of every card the fake opens.
	DefaultCreditLine = decimal.RequireFromString("5000.00")
)

// Paths of the two services, as in the WSDL addresses. A request on CarteraPath for a Central
// operation (or the other way round) gets WCF's ActionNotSupported fault; any other path
// serves both services.
const (
	CarteraPath = "/Cartera/ServicioCar.svc"
	CentralPath = "/Central/ServicioCentral.svc"
)

// Option configures a Handler.
type Option func(*Handler)

// WithNamespace sets the SOAP namespace the fake expects (default the WSDL's,
// http://tempuri.org/); it must match the client's Config.SOAPNamespace.
func WithNamespace(ns string) Option { return func(h *Handler) { h.ns = ns } }

// WithCentralContract sets the WCF contract name the fake expects in Central's SOAPAction
// (default IServicioCentral, the WSDL's); it must match the client's
// creditsystem.WithCentralContract.
func WithCentralContract(name string) Option { return func(h *Handler) { h.centralContract = name } }

// WithClock sets the fake's clock (dates of cards, tables and overdue installments).
func WithClock(now func() time.Time) Option { return func(h *Handler) { h.now = now } }

// WithCreditLine sets the credit line of the cards the fake opens (default 5000.00).
func WithCreditLine(d decimal.Decimal) Option { return func(h *Handler) { h.line = d } }

// WithFirstAuthorization makes the fake number its authorizations from n (default 1:
// AUT0000001, AUT0000002, ...). A fake in front of a database that outlives it (a development
// service restarted on its SQLite file) starts from a number no earlier run used, for example
// the Unix time in seconds, so a new authorization never repeats an autorizacion_id the database
// already holds. Such a fake also adopts what an earlier run recorded, so that a flow survives a
// restart: GrabarConsumo or GrabarReversoAutorizacion on an id below n takes it as a live
// authorization of the request's card (nMonto, nPlazo from the request), and
// GrabarReversoConsumo of an unknown invoice succeeds instead of answering 23.
func WithFirstAuthorization(n int) Option { return func(h *Handler) { h.firstAuth = n } }

// WithFixedCreditLines makes every card keep its whole credit line: no operation consumes it
// (and none restores it), so a development setup or a test suite can reuse one card number for
// any number of operations. Every ConsultarTarjeta shows the full line available (5000.00 by
// default); every GrabarAutorizacion is checked against the full line alone (an amount above it
// still answers nNumeroError 51, as does MagicInsufficientCredit); an answer that reports the
// line after an operation shows the full line minus that operation's own amount
// (GrabarConsumo: the invoiced amount) or the full line after a payment. Debts, tables,
// payments and reversals work as usual: only the line ignores them. Card then always shows
// Utilizado 0. Without this option (the default) authorizations, consumptions and payments
// move the line as the package documentation describes.
func WithFixedCreditLines() Option { return func(h *Handler) { h.fixedLines = true } }

// Handler is the fake creditsystem as an http.Handler, for a service that runs it on a real
// listener in development mode. Tests usually want NewServer.
type Handler struct {
	ns              string
	centralContract string
	now             func() time.Time
	line            decimal.Decimal
	firstAuth       int
	fixedLines      bool

	mu      sync.Mutex
	bank    *bank
	scripts map[string][]Outcome
	calls   map[string]int
	last    map[string]Request

	closed    chan struct{}
	closeOnce sync.Once
}

// NewHandler returns a fake with no cards yet; every card is opened on first use.
func NewHandler(opts ...Option) *Handler {
	h := &Handler{
		ns:              cartera.WSDLNamespace,
		centralContract: central.WSDLPortType,
		now:             time.Now,
		line:            DefaultCreditLine,
		scripts:         map[string][]Outcome{},
		calls:           map[string]int{},
		last:            map[string]Request{},
		closed:          make(chan struct{}),
	}
	for _, o := range opts {
		if o != nil { // a nil Option is ignored, as creditsystem.New does
			o(h)
		}
	}
	h.bank = newBank(h.now, h.line, h.fixedLines)
	if h.firstAuth > 0 {
		h.bank.seqAuth = h.firstAuth - 1
		h.bank.adoptBelow = h.firstAuth
	}
	return h
}

// Namespace returns the SOAP namespace the fake expects.
func (h *Handler) Namespace() string { return h.ns }

// Close releases requests held by Hang, LateSuccess, Delay or MagicTimeout.
func (h *Handler) Close() { h.closeOnce.Do(func() { close(h.closed) }) }

// Operations lists every operation the fake serves.
func Operations() []string {
	ops := append(slices.Clone(cartera.WSDLOperations), central.WSDLOperations...)
	slices.Sort(ops)
	return ops
}

func serviceOf(op string) (portType, dcns string, ok bool) {
	if slices.Contains(cartera.WSDLOperations, op) {
		return cartera.WSDLPortType, cartera.WSDLDataContractNamespace, true
	}
	if slices.Contains(central.WSDLOperations, op) {
		return central.WSDLPortType, central.WSDLDataContractNamespace, true
	}
	return "", "", false
}

func soapAction(ns, portType, op string) string {
	if !strings.HasSuffix(ns, "/") {
		ns += "/"
	}
	return ns + portType + "/" + op
}

// Script queues outcomes for the next calls of op, one per call, ahead of the normal
// behaviour (which includes the magic values). It panics on an unknown operation.
func (h *Handler) Script(op string, outcomes ...Outcome) {
	if _, _, ok := serviceOf(op); !ok {
		panic(fmt.Sprintf("creditsystemtest: Script: unknown operation %q", op))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.scripts[op] = append(h.scripts[op], outcomes...)
}

// Calls returns how many requests for op reached the fake, whatever their outcome.
func (h *Handler) Calls(op string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[op]
}

// LastRequest returns the last request received for op.
func (h *Handler) LastRequest(op string) (Request, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.last[op]
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
func (h *Handler) Card(numeroOIdentificacion string) (Card, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.bank.cards[numeroOIdentificacion]
	if !ok {
		return Card{}, false
	}
	return Card{Numero: c.numero, Identificacion: c.identificacion, Asignado: c.asignado, Utilizado: c.utilizado, Disponible: c.disponible()}, true
}

const maxRequest = 1 << 20

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	portType, dcns, known := serviceOf(op)
	contract := portType
	if portType == central.WSDLPortType {
		contract = h.centralContract
	}
	if !known || action != soapAction(h.ns, contract, op) || !h.pathServes(r.URL.Path, portType) {
		h.fault(w, http.StatusInternalServerError, "a:ActionNotSupported",
			fmt.Sprintf("The message with Action '%s' cannot be processed at the receiver, due to a ContractFilter mismatch at the EndpointDispatcher.", action))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest))
	if err != nil {
		drop(w)
		return
	}
	fields, lists := flatten(body)
	h.mu.Lock()
	h.calls[op]++
	h.last[op] = Request{Operation: op, SOAPAction: action, Header: r.Header.Clone(), Fields: fields, Lists: lists, Body: body}
	var scripted *Outcome
	if q := h.scripts[op]; len(q) > 0 {
		scripted = &q[0]
		h.scripts[op] = q[1:]
	}
	h.mu.Unlock()

	if scripted != nil {
		switch o := *scripted; o.kind {
		case kindBusiness:
			res := h.errorResult(op, o.code, o.message)
			h.answer(w, dcns, op, res)
			return
		case kindFault:
			h.fault(w, o.status, o.fault, o.message)
			return
		case kindDrop:
			drop(w)
			return
		case kindHang:
			h.hold(w, r)
			return
		case kindRespond:
			w.Header().Set("Content-Type", contentTypeWS)
			w.WriteHeader(o.status)
			w.Write(o.body)
			return
		case kindDelay:
			if !h.wait(r.Context(), o.delay) {
				h.release(w, r)
				return
			}
		case kindLate:
			h.process(op, body)
			h.hold(w, r)
			return
		}
	}
	res := h.process(op, body)
	switch {
	case res.hang:
		h.hold(w, r)
	case res.fault != "":
		h.fault(w, res.status, res.fault, res.faultMsg)
	default:
		h.answer(w, dcns, op, res.result)
	}
}

func (h *Handler) pathServes(path, portType string) bool {
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
func (h *Handler) wait(ctx context.Context, d time.Duration) bool {
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
	case <-h.closed:
		return false
	}
}

// hold never answers: it returns when the caller gives up, and drops the connection when
// the fake is closed first, so that no empty answer goes out.
func (h *Handler) hold(w http.ResponseWriter, r *http.Request) {
	h.wait(r.Context(), -1)
	h.release(w, r)
}

func (h *Handler) release(w http.ResponseWriter, r *http.Request) {
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

func (h *Handler) answer(w http.ResponseWriter, dcns, op string, result any) {
	var buf bytes.Buffer
	writeAnswer(&buf, h.ns, dcns, op, result)
	w.Header().Set("Content-Type", contentTypeWS)
	w.Write(buf.Bytes())
}

func (h *Handler) fault(w http.ResponseWriter, status int, code, msg string) {
	var buf bytes.Buffer
	writeFault(&buf, code, msg)
	w.Header().Set("Content-Type", contentTypeWS)
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// result is what processing a request produced.
type result struct {
	result   any // the generated Respuesta...Vm
	hang     bool
	fault    string
	faultMsg string
	status   int
}

func (h *Handler) process(op string, body []byte) result {
	spec := specs[op]
	req := spec.newRequest()
	if err := decodeRequest(body, xml.Name{Space: h.ns, Local: op}, req); err != nil {
		return result{fault: "a:DeserializationFailed", status: http.StatusInternalServerError,
			faultMsg: "The formatter threw an exception while trying to deserialize the message: " + err.Error()}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := spec.handle(h.bank, req)
	if out.biz != nil {
		return result{result: h.errorResult(op, out.biz.code, out.biz.msg)}
	}
	return result{result: out.result, hang: out.hang, fault: out.fault, faultMsg: out.faultMsg, status: http.StatusInternalServerError}
}
