package erptest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/erp"
)

// paymentKey identifies a hand-over: the ERP issues one document per event and operation.
type paymentKey struct {
	event           erp.PaymentEvent
	numeroOperacion int64
}

type handOverAnswer struct {
	ErrorAPI        bool   `json:"error_api"`
	Mensaje         string `json:"mensaje"`
	NumeroDocumento string `json:"numero_documento"`
	Duplicado       bool   `json:"duplicado"`
}

// HandOvers returns the distinct hand-overs the ERP accepted (one per evento and
// numero_operacion; a repeat is not listed again), oldest first, as decoded from the wire:
// amounts as sent (2 decimals; compare them with decimal.Equal), empty facturas and rubros as
// nil. The document issued for each is "RC-<numero_operacion>" for a payment and
// "NC-<numero_operacion>" for a reversal. Calls(erp.OpHandOverPayment) counts every request
// instead, repeats and refusals included.
func (f *Fake) HandOvers() []erp.PaymentHandOver {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]erp.PaymentHandOver, len(f.handOvers))
	for i, h := range f.handOvers {
		h.Facturas = slices.Clone(h.Facturas)
		h.Rubros = slices.Clone(h.Rubros)
		out[i] = h
	}
	return out
}

// documentFor is the document number the fake issues for a hand-over: "RC-<numero_operacion>"
// (a receipt) for erp.PaymentApplied, "NC-<numero_operacion>" (a credit note) for
// erp.PaymentReversed.
func documentFor(event erp.PaymentEvent, numeroOperacion int64) string {
	prefix := "RC-"
	if event == erp.PaymentReversed {
		prefix = "NC-"
	}
	return prefix + strconv.FormatInt(numeroOperacion, 10)
}

func (f *Fake) serveHandOver(w http.ResponseWriter, r *http.Request) {
	body, react, ok := f.begin(w, r, erp.OpHandOverPayment)
	if !ok {
		return
	}
	h, msg := parseHandOver(body, r.Header.Get("Idempotency-Key"))
	if msg != "" {
		writeJSON(w, http.StatusBadRequest, rejection(msg))
		return
	}
	if f.react(react, w, r, func() { f.handOver(h) }) {
		return
	}
	switch h.NumeroTarjeta {
	case NumeroTarjetaServerError:
		writeJSON(w, http.StatusInternalServerError, rejection("error interno del ERP"))
		return
	case NumeroTarjetaTimeout:
		f.hang(r.Context()) // does not return
	}
	writeJSON(w, http.StatusOK, f.handOver(h))
}

// handOver issues the document of h, or answers the one already issued for its event and
// operation number with duplicado true. A repeat is not compared with the first body.
func (f *Fake) handOver(h erp.PaymentHandOver) handOverAnswer {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := paymentKey{h.Event, h.NumeroOperacion}
	if doc, ok := f.documents[k]; ok {
		return handOverAnswer{Mensaje: "documento ya emitido", NumeroDocumento: doc, Duplicado: true}
	}
	doc := documentFor(h.Event, h.NumeroOperacion)
	f.documents[k] = doc
	f.handOvers = append(f.handOvers, h)
	msg := "recibo emitido"
	if h.Event == erp.PaymentReversed {
		msg = "nota de credito emitida"
	}
	return handOverAnswer{Mensaje: msg, NumeroDocumento: doc}
}

// The members of a hand-over; every one is required except motivo.
var (
	handOverMembers = []string{"evento", "numero_operacion", "numero_tarjeta", "valor_pago", "fecha_pago", "facturas", "rubros", "motivo"}
	invoiceMembers  = []string{"numero_factura", "valor"}
	rubroMembers    = []string{"codigo", "tipo_documento", "valor"}
)

// parseHandOver checks a hand-over the way a strict ERP would: known members only (in the
// items too), every member but motivo present, evento pago or reverso, numero_operacion a
// JSON integer > 0, amounts JSON numbers with at most 2 decimals, fecha_pago yyyy-mm-dd, and an
// Idempotency-Key, when sent, equal to "<evento>-<numero_operacion>". It returns the
// refusal's mensaje, or "".
func parseHandOver(body []byte, idempotencyKey string) (erp.PaymentHandOver, string) {
	var h erp.PaymentHandOver
	m, msg := object(body, "", handOverMembers, "motivo")
	if msg != "" {
		return h, msg
	}
	evento, ok := text(m["evento"])
	if h.Event = erp.PaymentEvent(evento); !ok || (h.Event != erp.PaymentApplied && h.Event != erp.PaymentReversed) {
		return h, "evento debe ser pago o reverso"
	}
	n, err := strconv.ParseInt(string(m["numero_operacion"]), 10, 64)
	if err != nil || n <= 0 {
		return h, "numero_operacion debe ser un entero mayor que 0"
	}
	h.NumeroOperacion = n
	if h.NumeroTarjeta, ok = text(m["numero_tarjeta"]); !ok || h.NumeroTarjeta == "" {
		return h, "falta numero_tarjeta"
	}
	if h.ValorPago, msg = money(m["valor_pago"], "valor_pago"); msg != "" {
		return h, msg
	}
	h.FechaPago, ok = text(m["fecha_pago"])
	if d, err := time.Parse(time.DateOnly, h.FechaPago); !ok || err != nil || d.Format(time.DateOnly) != h.FechaPago {
		return h, "fecha_pago debe ser aaaa-mm-dd"
	}
	if raw, sent := m["motivo"]; sent {
		if h.Motivo, ok = text(raw); !ok {
			return h, "valor no textual: motivo"
		}
	}
	facturas, msg := list(m["facturas"], "facturas", invoiceMembers)
	if msg != "" {
		return h, msg
	}
	for i, it := range facturas {
		name := "facturas[" + strconv.Itoa(i) + "]."
		inv := erp.PaymentInvoice{}
		if inv.NumeroFactura, ok = text(it["numero_factura"]); !ok || inv.NumeroFactura == "" {
			return h, "falta " + name + "numero_factura"
		}
		if inv.Valor, msg = money(it["valor"], name+"valor"); msg != "" {
			return h, msg
		}
		h.Facturas = append(h.Facturas, inv)
	}
	rubros, msg := list(m["rubros"], "rubros", rubroMembers)
	if msg != "" {
		return h, msg
	}
	for i, it := range rubros {
		name := "rubros[" + strconv.Itoa(i) + "]."
		rb := erp.PaymentRubro{}
		if rb.Codigo, ok = text(it["codigo"]); !ok || rb.Codigo == "" {
			return h, "falta " + name + "codigo"
		}
		if rb.TipoDocumento, ok = text(it["tipo_documento"]); !ok {
			return h, "valor no textual: " + name + "tipo_documento"
		}
		if rb.Valor, msg = money(it["valor"], name+"valor"); msg != "" {
			return h, msg
		}
		h.Rubros = append(h.Rubros, rb)
	}
	if want := string(h.Event) + "-" + strconv.FormatInt(h.NumeroOperacion, 10); idempotencyKey != "" && idempotencyKey != want {
		return h, "Idempotency-Key " + idempotencyKey + " no corresponde a " + want
	}
	return h, ""
}

// object decodes a JSON object with the given members, all required but the optional ones;
// prefix names it in the refusal ("" for the body, "facturas[0]." for an item).
func object(raw []byte, prefix string, known []string, optional ...string) (map[string]json.RawMessage, string) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		if prefix == "" {
			return nil, "cuerpo JSON invalido"
		}
		return nil, prefix + " debe ser un objeto"
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names) // one refusal, the same every time
	for _, name := range names {
		if !slices.Contains(known, name) {
			return nil, "campo desconocido: " + prefix + name
		}
	}
	for _, name := range known {
		if _, sent := m[name]; !sent && !slices.Contains(optional, name) {
			return nil, "falta " + prefix + name
		}
	}
	return m, ""
}

// list decodes a JSON array of objects with exactly the given members.
func list(raw json.RawMessage, name string, members []string) ([]map[string]json.RawMessage, string) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, name + " debe ser una lista"
	}
	out := make([]map[string]json.RawMessage, 0, len(items))
	for i, it := range items {
		m, msg := object(it, name+"["+strconv.Itoa(i)+"].", members)
		if msg != "" {
			return nil, msg
		}
		out = append(out, m)
	}
	return out, ""
}

// money reads an amount: a JSON number (not a string) with at most 2 decimals.
func money(raw json.RawMessage, name string) (decimal.Decimal, string) {
	if !isJSONNumber(raw) {
		return decimal.Decimal{}, "valor no numerico: " + name
	}
	d, err := decimal.NewFromString(string(raw))
	if err != nil {
		return decimal.Decimal{}, "valor no numerico: " + name
	}
	if !d.Equal(d.Truncate(2)) {
		return decimal.Decimal{}, "valor con mas de 2 decimales: " + name
	}
	return d, ""
}

// text reads a JSON string; null or another type is not one.
func text(raw json.RawMessage) (string, bool) {
	var s *string
	if json.Unmarshal(raw, &s) != nil || s == nil {
		return "", false
	}
	return *s, true
}
