package erptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/internal/fakehttp"
)

// Magic values: a request carrying one gets the outcome its name says, from any HTTP client,
// without scripting. Each is named after the member it goes in.
const (
	// IdentificacionExisting exists in the ERP under every codigo_empresa, with
	// codigo_cliente CodigoClienteExisting.
	IdentificacionExisting = "0999999999"
	// NombreClienteErrorAPI as nombre_cliente of a create or update, or of a lookup that
	// sends it, gives HTTP 200 with error_api true and changes nothing. It is matched exactly,
	// on the payload sent (see the package documentation).
	NombreClienteErrorAPI = "ERROR_API"
	// IdentificacionServerError gives HTTP 500 on the lookup and on a sync.
	IdentificacionServerError = "0999999500"
	// IdentificacionTimeout gets no answer until the caller gives up, on the lookup and on a
	// sync.
	IdentificacionTimeout = "0999999504"
	// NumeroTarjetaServerError as numero_tarjeta of a hand-over gives HTTP 500; no document
	// is issued. The same digits as IdentificacionServerError.
	NumeroTarjetaServerError = "0999999500"
	// NumeroTarjetaTimeout as numero_tarjeta of a hand-over gets no answer until the caller
	// gives up; no document is issued. The same digits as IdentificacionTimeout.
	NumeroTarjetaTimeout = "0999999504"
)

// CodigoClienteExisting is the codigo_cliente of IdentificacionExisting.
const CodigoClienteExisting = "C-0999999999"

// Existing client answered for IdentificacionExisting until a test changes it.
const (
	existingNombre    = "CLIENTE EXISTENTE ERP"
	existingTelefono1 = "0990000001"
	existingDireccion = "AV. AMAZONAS N1-23, QUITO"
)

// Fake is the ERP's state and behaviour, an http.Handler without a listener. Most tests use
// NewServer; a development service serves the Fake on its own loopback listener. Safe for
// concurrent use.
type Fake struct {
	mu       sync.Mutex
	clients  map[key]*record
	byCodigo map[string]key
	scripts  map[string][]Reaction
	requests map[string][]Request

	documents map[paymentKey]string // the document issued for each hand-over
	handOvers []erp.PaymentHandOver // the distinct hand-overs, in the order received

	lookupDelay, syncDelay time.Duration
	onLookup               func(ctx context.Context, codigoEmpresa, identificacion string)
	apiKeyHeader, apiKey   string

	mux       *http.ServeMux
	closeOnce sync.Once
	closed    chan struct{}
}

type key struct{ empresa, identificacion string }

type record struct {
	fields   map[string]json.RawMessage // the merged payloads, ERP names, without operacion
	inactivo bool
}

// Request is one call the fake received.
type Request struct {
	Op     string // erp.OpLookupClient, erp.OpSyncClient or erp.OpHandOverPayment
	Header http.Header
	Body   json.RawMessage
}

// Option configures a Fake. A nil Option is ignored, as the clients' New does.
type Option func(*Fake)

// WithClients seeds the ERP with clients (CodigoCliente, CodigoEmpresa and Identificacion
// are required).
func WithClients(clients ...erp.ClientRecord) Option {
	return func(f *Fake) {
		for _, c := range clients {
			f.AddClient(c)
		}
	}
}

// WithLookupDelay makes every lookup answer after d (or when the caller gives up).
func WithLookupDelay(d time.Duration) Option { return func(f *Fake) { f.lookupDelay = d } }

// WithSyncDelay makes every create/update answer after d (applied before the change).
func WithSyncDelay(d time.Duration) Option { return func(f *Fake) { f.syncDelay = d } }

// OnLookup calls hook at the start of every lookup, in the request's goroutine, before any
// delay or scripted reaction. A hook may block: the answer waits for it. ctx ends when the
// caller gives up. This is how a test proves the lookup runs alongside something else.
func OnLookup(hook func(ctx context.Context, codigoEmpresa, identificacion string)) Option {
	return func(f *Fake) { f.onLookup = hook }
}

// WithAPIKey makes the fake answer 401 to requests without header: key.
func WithAPIKey(header, key string) Option {
	return func(f *Fake) { f.apiKeyHeader, f.apiKey = header, key }
}

// NewFake returns a Fake with no listener.
func NewFake(opts ...Option) *Fake {
	f := &Fake{
		clients:  map[key]*record{},
		byCodigo: map[string]key{},
		scripts:  map[string][]Reaction{},
		requests: map[string][]Request{},
		closed:   make(chan struct{}),

		documents: map[paymentKey]string{},
	}
	for _, o := range opts {
		if o != nil {
			o(f)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+erp.DefaultLookupPath, f.serveLookup)
	mux.HandleFunc("POST "+erp.DefaultClientsPath, f.serveSync)
	mux.HandleFunc("POST "+erp.DefaultPaymentsPath, f.serveHandOver)
	f.mux = mux
	return f
}

// Close releases the requests held by Hang, LateSuccess, After, the delay options,
// IdentificacionTimeout and NumeroTarjetaTimeout.
func (f *Fake) Close() { f.closeOnce.Do(func() { close(f.closed) }) }

// Server is a Fake listening on a loopback port through httptest, for tests that want the
// real network path (keep-alive, timeouts, dropped connections).
type Server struct {
	*Fake
	// URL is the ERP_URL of the fake (no trailing slash).
	URL string
	srv *httptest.Server
}

// ErrConnectionDropped is what Transport returns where a real connection would close without
// an answer.
var ErrConnectionDropped = errors.New("erptest: connection dropped by the ERP")

// MockURL is the ERP_URL for a client over Transport; it is never dialled.
const MockURL = "http://erp.mock"

// Transport returns an http.RoundTripper that hands every request to the fake in the caller's
// process: no socket, no network. A held request ends when the request's context does.
func (f *Fake) Transport() http.RoundTripper {
	return fakehttp.Transport(f, ErrConnectionDropped)
}

// HTTPClient returns an *http.Client over Transport.
func (f *Fake) HTTPClient() *http.Client { return &http.Client{Transport: f.Transport()} }

// NewServer starts a Fake on a loopback port. Close it when done.
func NewServer(opts ...Option) *Server {
	f := NewFake(opts...)
	srv := httptest.NewServer(f)
	return &Server{Fake: f, URL: srv.URL, srv: srv}
}

// Config is an erp.Config pointing at the server, with the given timeout.
func (s *Server) Config(timeout time.Duration) erp.Config {
	return erp.Config{BaseURL: s.URL, Timeout: timeout}
}

// Close releases pending requests and stops the server.
func (s *Server) Close() {
	s.Fake.Close()
	s.srv.Close()
}

// AddClient stores c as an ERP client (replacing one with the same key).
func (f *Fake) AddClient(c erp.ClientRecord) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fields := map[string]json.RawMessage{}
	for name, v := range map[string]string{
		"codigo_cliente": c.CodigoCliente, "codigo_empresa": c.CodigoEmpresa,
		"nombre_cliente": c.NombreCliente, "identificacion": c.Identificacion,
		"numero_telefono_1": c.Telefono1, "numero_telefono_2": c.Telefono2, "direccion_1": c.Direccion1,
	} {
		if v != "" {
			fields[name] = jsonString(v)
		}
	}
	k := key{c.CodigoEmpresa, c.Identificacion}
	f.clients[k] = &record{fields: fields, inactivo: c.Inactivo}
	f.byCodigo[c.CodigoCliente] = k
}

// Client returns the ERP's view of a client, as the lookup would answer it.
func (f *Fake) Client(codigoEmpresa, identificacion string) (erp.ClientRecord, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.get(key{codigoEmpresa, identificacion})
	if r == nil {
		return erp.ClientRecord{}, false
	}
	return r.view(), true
}

// Fields returns what the ERP holds for a client: every payload member it received (ERP
// names, values as sent), merged over creates and updates.
func (f *Fake) Fields(codigoEmpresa, identificacion string) (map[string]json.RawMessage, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.get(key{codigoEmpresa, identificacion})
	if r == nil {
		return nil, false
	}
	out := make(map[string]json.RawMessage, len(r.fields))
	for k, v := range r.fields {
		out[k] = v
	}
	return out, true
}

// Calls counts the requests received for op (erp.OpLookupClient, erp.OpSyncClient or
// erp.OpHandOverPayment), failed and repeated ones included.
func (f *Fake) Calls(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests[op])
}

// Requests returns the requests received for op, oldest first.
func (f *Fake) Requests(op string) []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests[op]...)
}

// get returns the record for k; the magic existing client is created on first use under
// any codigo_empresa. Callers hold f.mu.
func (f *Fake) get(k key) *record {
	if r, ok := f.clients[k]; ok {
		return r
	}
	if k.identificacion != IdentificacionExisting {
		return nil
	}
	r := &record{fields: map[string]json.RawMessage{
		"codigo_cliente":    jsonString(CodigoClienteExisting),
		"codigo_empresa":    jsonString(k.empresa),
		"nombre_cliente":    jsonString(existingNombre),
		"identificacion":    jsonString(IdentificacionExisting),
		"numero_telefono_1": jsonString(existingTelefono1),
		"direccion_1":       jsonString(existingDireccion),
	}}
	f.clients[k] = r
	return r
}

func (r *record) view() erp.ClientRecord {
	s := func(name string) string {
		var v string
		_ = json.Unmarshal(r.fields[name], &v)
		return v
	}
	return erp.ClientRecord{
		CodigoCliente:  s("codigo_cliente"),
		CodigoEmpresa:  s("codigo_empresa"),
		NombreCliente:  s("nombre_cliente"),
		Identificacion: s("identificacion"),
		Telefono1:      s("numero_telefono_1"),
		Telefono2:      s("numero_telefono_2"),
		Direccion1:     s("direccion_1"),
		Inactivo:       r.inactivo,
	}
}

// wireClient is the ERP's own shape of a client in the lookup answer; absent optional
// values are null.
type wireClient struct {
	CodigoCliente   string  `json:"codigo_cliente"`
	CodigoEmpresa   string  `json:"codigo_empresa"`
	NombreCliente   string  `json:"nombre_cliente"`
	Identificacion  string  `json:"identificacion"`
	NumeroTelefono1 *string `json:"numero_telefono_1"`
	NumeroTelefono2 *string `json:"numero_telefono_2"`
	Direccion1      *string `json:"direccion_1"`
	Inactivo        bool    `json:"inactivo"`
}

func toWire(c erp.ClientRecord) *wireClient {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return &wireClient{c.CodigoCliente, c.CodigoEmpresa, c.NombreCliente, c.Identificacion,
		opt(c.Telefono1), opt(c.Telefono2), opt(c.Direccion1), c.Inactivo}
}

// The ERP's answers: every one carries error_api and mensaje.
type errorAnswer struct {
	ErrorAPI bool   `json:"error_api"`
	Mensaje  string `json:"mensaje"`
}

type lookupAnswer struct {
	ErrorAPI   bool        `json:"error_api"`
	Mensaje    string      `json:"mensaje"`
	Encontrado bool        `json:"encontrado"`
	Cliente    *wireClient `json:"cliente"`
}

type syncAnswer struct {
	ErrorAPI      bool   `json:"error_api"`
	Mensaje       string `json:"mensaje"`
	CodigoCliente string `json:"codigo_cliente"`
	Operacion     int    `json:"operacion"`
}

func rejection(mensaje string) errorAnswer { return errorAnswer{ErrorAPI: true, Mensaje: mensaje} }

// ServeHTTP serves the ERP's three endpoints at their default paths (erp.DefaultLookupPath,
// erp.DefaultClientsPath, erp.DefaultPaymentsPath).
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) { f.mux.ServeHTTP(w, r) }

// begin records the request and returns its body and the scripted reaction (Process when
// none is).
func (f *Fake) begin(w http.ResponseWriter, r *http.Request, op string) ([]byte, Reaction, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	f.mu.Lock()
	f.requests[op] = append(f.requests[op], Request{Op: op, Header: r.Header.Clone(), Body: bytes.Clone(body)})
	react := Process()
	if q := f.scripts[op]; len(q) > 0 {
		react, f.scripts[op] = q[0], q[1:]
	}
	f.mu.Unlock()
	if err != nil {
		writeJSON(w, http.StatusBadRequest, rejection("cuerpo ilegible"))
		return nil, react, false
	}
	if f.apiKey != "" && r.Header.Get(f.apiKeyHeader) != f.apiKey {
		writeJSON(w, http.StatusUnauthorized, rejection("credenciales invalidas"))
		return nil, react, false
	}
	return body, react, true
}

// wait sleeps d. When the caller gives up or the fake closes first, the request is
// abandoned (see abandon) and wait does not return.
func (f *Fake) wait(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return
	case <-ctx.Done():
	case <-f.closed:
	}
	abandon()
}

// hang never answers: it abandons the request once the caller gives up or the fake closes.
func (f *Fake) hang(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-f.closed:
	}
	abandon()
}

// abandon ends the handler without an answer: net/http closes the connection (rather than
// sending an empty 200) and does not log this panic.
func abandon() { panic(http.ErrAbortHandler) }

func (f *Fake) serveLookup(w http.ResponseWriter, r *http.Request) {
	body, react, ok := f.begin(w, r, erp.OpLookupClient)
	if !ok {
		return
	}
	var req struct {
		CodigoEmpresa  string `json:"codigo_empresa"`
		Identificacion string `json:"identificacion"`
		NombreCliente  string `json:"nombre_cliente"`
	}
	// The query takes exactly these members (nombre_cliente optional, erp.Client.Lookup): any
	// other is refused as a strict ERP would, saying which member it does not know.
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) == nil {
		for name := range members {
			if name != "codigo_empresa" && name != "identificacion" && name != "nombre_cliente" {
				writeJSON(w, http.StatusBadRequest, rejection("campo desconocido: "+name))
				return
			}
		}
	}
	if err := strictDecode(body, &req); err != nil || req.CodigoEmpresa == "" || req.Identificacion == "" {
		writeJSON(w, http.StatusBadRequest, rejection("se requieren codigo_empresa e identificacion"))
		return
	}
	if f.onLookup != nil {
		f.onLookup(r.Context(), req.CodigoEmpresa, req.Identificacion)
	}
	f.wait(r.Context(), f.lookupDelay)
	if f.react(react, w, r, nil) {
		return
	}
	if f.magicFailure(w, r, req.Identificacion) {
		return
	}
	if req.NombreCliente == NombreClienteErrorAPI {
		writeJSON(w, http.StatusOK, rejection("ERROR_API: el ERP rechazo el cliente"))
		return
	}
	f.mu.Lock()
	a := lookupAnswer{Mensaje: "cliente no encontrado"}
	if rec := f.get(key{req.CodigoEmpresa, req.Identificacion}); rec != nil {
		a = lookupAnswer{Mensaje: "cliente encontrado", Encontrado: true, Cliente: toWire(rec.view())}
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, a)
}

func (f *Fake) magicFailure(w http.ResponseWriter, r *http.Request, identificacion string) bool {
	switch identificacion {
	case IdentificacionServerError:
		writeJSON(w, http.StatusInternalServerError, rejection("error interno del ERP"))
		return true
	case IdentificacionTimeout:
		f.hang(r.Context()) // does not return
	}
	return false
}

// Fields the ERP accepts in a client payload besides the extra_fields families.
var knownFields = map[string]bool{
	"operacion": true, "codigo_cliente": true, "codigo_empresa": true, "nombre_cliente": true,
	"identificacion": true, "email": true, "numero_telefono_1": true, "numero_telefono_2": true,
	"direccion_1": true, "codigo_vendedor": true, "termino_pagos": true, "limite_credito_1": true,
	"limite_credito_2": true, "codigo_sucursal": true, "localizacion": true, "lista_precios": true,
	"nivel_riesgo": true,
}

var extraField = regexp.MustCompile(`^(lista_datos|alfanumerico|valor|fecha|booleano|texto)_([1-9]|10)$`)

func (f *Fake) serveSync(w http.ResponseWriter, r *http.Request) {
	body, react, ok := f.begin(w, r, erp.OpSyncClient)
	if !ok {
		return
	}
	fields, op, msg := parsePayload(body)
	if msg != "" {
		writeJSON(w, http.StatusBadRequest, rejection(msg))
		return
	}
	f.wait(r.Context(), f.syncDelay)
	k := key{str(fields["codigo_empresa"]), str(fields["identificacion"])}
	if f.react(react, w, r, func() { f.sync(op, k, fields) }) {
		return
	}
	if f.magicFailure(w, r, k.identificacion) {
		return
	}
	a, status := f.sync(op, k, fields)
	writeJSON(w, status, a)
}

// parsePayload checks the wire format the way a strict ERP would: known names only (a
// public name such as telefono_1 that should have been renamed is refused), operacion 0/1,
// limits and valor_n as JSON numbers.
func parsePayload(body []byte) (map[string]json.RawMessage, int, string) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, 0, "cuerpo JSON invalido"
	}
	for name, v := range fields {
		if !knownFields[name] && !extraField.MatchString(name) {
			return nil, 0, "campo desconocido: " + name
		}
		numeric := name == "limite_credito_1" || name == "limite_credito_2"
		if m := extraField.FindStringSubmatch(name); m != nil && m[1] == "valor" {
			numeric = true
		}
		if numeric && !isJSONNumber(v) {
			return nil, 0, "valor no numerico: " + name
		}
	}
	op, err := strconv.Atoi(string(fields["operacion"]))
	if err != nil || (op != 0 && op != 1) {
		return nil, 0, "operacion debe ser 0 o 1"
	}
	delete(fields, "operacion")
	for _, req := range []string{"codigo_empresa", "identificacion"} {
		if str(fields[req]) == "" {
			return nil, 0, "falta " + req
		}
	}
	if op == 0 && str(fields["nombre_cliente"]) == "" {
		return nil, 0, "falta nombre_cliente"
	}
	return fields, op, ""
}

// sync applies a create or update and returns the answer to send.
func (f *Fake) sync(op int, k key, fields map[string]json.RawMessage) (any, int) {
	if str(fields["nombre_cliente"]) == NombreClienteErrorAPI {
		return rejection("ERROR_API: el ERP rechazo el cliente"), http.StatusOK
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	existing := f.get(k)
	switch op {
	case 0:
		if existing != nil {
			return rejection("el cliente ya existe con codigo " + str(existing.fields["codigo_cliente"])), http.StatusOK
		}
		codigo := str(fields["codigo_cliente"])
		if codigo == "" {
			codigo = "C-" + k.identificacion
		}
		if _, taken := f.byCodigo[codigo]; taken {
			return rejection("codigo_cliente ya asignado: " + codigo), http.StatusOK
		}
		rec := &record{fields: fields}
		rec.fields["codigo_cliente"] = jsonString(codigo)
		f.clients[k] = rec
		f.byCodigo[codigo] = k
		return syncAnswer{Mensaje: "cliente creado", CodigoCliente: codigo, Operacion: op}, http.StatusOK
	default:
		if existing == nil {
			return rejection("el cliente no existe"), http.StatusOK
		}
		codigo := str(existing.fields["codigo_cliente"])
		if sent := str(fields["codigo_cliente"]); sent != "" && sent != codigo {
			return rejection("codigo_cliente no corresponde al cliente " + codigo), http.StatusOK
		}
		for name, v := range fields {
			existing.fields[name] = v
		}
		existing.fields["codigo_cliente"] = jsonString(codigo)
		f.byCodigo[codigo] = k
		return syncAnswer{Mensaje: "cliente actualizado", CodigoCliente: codigo, Operacion: op}, http.StatusOK
	}
}

func isJSONNumber(v json.RawMessage) bool {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if dec.Decode(&x) != nil {
		return false
	}
	n, ok := x.(json.Number)
	return ok && n != ""
}

func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func str(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("erptest: encoding answer: %v", err))
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
