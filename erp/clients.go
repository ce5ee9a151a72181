package erp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/upstream"
)

// ClientRecord is a client as the ERP's external query returns it, with the public names of the
// credit service (the `client` object of POST /clients/exists), so it can be answered as is.
type ClientRecord struct {
	CodigoCliente  string `json:"codigo_cliente"`
	CodigoEmpresa  string `json:"codigo_empresa"`
	NombreCliente  string `json:"nombre_cliente"`
	Identificacion string `json:"identificacion"`
	Telefono1      string `json:"telefono_1"`
	Telefono2      string `json:"telefono_2"`
	Direccion1     string `json:"direccion_1"`
	Inactivo       bool   `json:"inactivo"`
}

// LookupResult is the answer of LookupClient.
type LookupResult struct {
	// Found reports whether the ERP knows the client: its answer has "encontrado" true AND a
	// "cliente" object with a codigo_cliente. Anything less is not found, and Client is nil.
	Found  bool
	Client *ClientRecord
	// Raw is the ERP's answer as received.
	Raw json.RawMessage
}

// LookupQuery is the input of the ERP's external query: the client's key (CodigoEmpresa,
// Identificacion, both required) and, when the caller knows it, the name it is about to
// register (NombreCliente, optional, sent only when not empty). The ERP answers by the key; the
// name lets it refuse a client it will not take (error_api) before anything is created.
type LookupQuery struct {
	CodigoEmpresa  string
	Identificacion string
	NombreCliente  string
}

// lookupRequest and lookupAnswer are the wire shape of the external query (see doc.go).
type lookupRequest struct {
	CodigoEmpresa  string `json:"codigo_empresa"`
	Identificacion string `json:"identificacion"`
	NombreCliente  string `json:"nombre_cliente,omitempty"`
}

type lookupAnswer struct {
	Encontrado flexBool    `json:"encontrado"`
	Cliente    *wireClient `json:"cliente"`
}

type wireClient struct {
	CodigoCliente   string   `json:"codigo_cliente"`
	CodigoEmpresa   string   `json:"codigo_empresa"`
	NombreCliente   string   `json:"nombre_cliente"`
	Identificacion  string   `json:"identificacion"`
	NumeroTelefono1 string   `json:"numero_telefono_1"`
	NumeroTelefono2 string   `json:"numero_telefono_2"`
	Direccion1      string   `json:"direccion_1"`
	Inactivo        flexBool `json:"inactivo"`
}

// LookupClient asks the ERP's external query whether the client identified by
// (codigoEmpresa, identificacion) exists. A client the ERP does not know is a result with
// Found false, not an error.
func (c *Client) LookupClient(ctx context.Context, codigoEmpresa, identificacion string) (*LookupResult, error) {
	return c.Lookup(ctx, LookupQuery{CodigoEmpresa: codigoEmpresa, Identificacion: identificacion})
}

// Lookup is LookupClient with the whole query: it also sends q.NombreCliente when it is set.
func (c *Client) Lookup(ctx context.Context, q LookupQuery) (_ *LookupResult, err error) {
	ctx, finish := upstream.StartCall(ctx)
	defer finish(&err)
	if strings.TrimSpace(q.CodigoEmpresa) == "" || strings.TrimSpace(q.Identificacion) == "" {
		return nil, fmt.Errorf("erp: %s: %w: codigo_empresa and identificacion are required", OpLookupClient, ErrInvalidRequest)
	}
	body, err := marshal(lookupRequest(q))
	if err != nil {
		return nil, fmt.Errorf("erp: %s: %w", OpLookupClient, err)
	}
	raw, status, err := c.post(ctx, OpLookupClient, c.cfg.LookupPath, body, nil)
	if err != nil {
		return nil, err
	}
	return decodeLookup(raw, status)
}

func decodeLookup(raw []byte, status int) (*LookupResult, error) {
	var a lookupAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, undecodable(OpLookupClient, status, err)
	}
	res := &LookupResult{Raw: json.RawMessage(raw)}
	// Found needs both the ERP's "encontrado" and a client to show for it: a client object
	// without encontrado, or encontrado without a client (null, missing, or an object without
	// codigo_cliente), is not found, so no caller ever sees a half-filled client.
	w := a.Cliente
	if !bool(a.Encontrado) || w == nil || strings.TrimSpace(w.CodigoCliente) == "" {
		return res, nil
	}
	res.Found = true
	res.Client = &ClientRecord{
		CodigoCliente:  w.CodigoCliente,
		CodigoEmpresa:  w.CodigoEmpresa,
		NombreCliente:  w.NombreCliente,
		Identificacion: w.Identificacion,
		Telefono1:      w.NumeroTelefono1,
		Telefono2:      w.NumeroTelefono2,
		Direccion1:     w.Direccion1,
		Inactivo:       bool(w.Inactivo),
	}
	return res, nil
}

// Operation is the ERP's `operacion` of a client sync.
type Operation int

const (
	// OperationCreate (operacion 0) creates the client in the ERP.
	OperationCreate Operation = 0
	// OperationUpdate (operacion 1) updates a client the ERP already has.
	OperationUpdate Operation = 1
)

// String is the name the credit service reports (`create`, `update`).
func (o Operation) String() string {
	switch o {
	case OperationCreate:
		return "create"
	case OperationUpdate:
		return "update"
	}
	return fmt.Sprintf("Operation(%d)", int(o))
}

// ClientPayload is the local client record sent to the ERP. Strings left empty and nil
// limits are not sent (the ERP keeps what it has); see doc.go for the mapping.
type ClientPayload struct {
	CodigoCliente  string
	CodigoEmpresa  string // required
	NombreCliente  string // required
	Identificacion string // required
	Email          string
	Telefono1      string // sent as numero_telefono_1
	Telefono2      string // sent as numero_telefono_2
	Direccion1     string
	CodigoVendedor string
	TerminoPagos   string
	LimiteCredito1 *decimal.Decimal // sent as a JSON number, digits exactly as the decimal holds them
	LimiteCredito2 *decimal.Decimal
	CodigoSucursal string
	Localizacion   string
	ListaPrecios   string
	NivelRiesgo    string
	// ExtraFields is the record's extra_fields JSON object (or empty). Each member goes to
	// the top level of the payload with its value copied unchanged, so numbers stay exact.
	ExtraFields json.RawMessage
}

// SyncResult is the answer of SyncClient.
type SyncResult struct {
	// CodigoCliente is the code the ERP assigned (create) or confirmed (update).
	CodigoCliente string
	// Message is the ERP's mensaje, possibly empty.
	Message string
	// Raw is the ERP's answer as received, to be stored as erp_response.
	Raw json.RawMessage
}

type syncAnswer struct {
	CodigoCliente string `json:"codigo_cliente"`
	Mensaje       string `json:"mensaje"`
}

// SyncClient creates (OperationCreate) or updates (OperationUpdate) the client in the ERP
// through the clients endpoint. It is not retried: after a timeout the ERP may have applied
// it, and LookupClient tells.
func (c *Client) SyncClient(ctx context.Context, op Operation, p ClientPayload) (_ *SyncResult, err error) {
	ctx, finish := upstream.StartCall(ctx)
	defer finish(&err)
	body, err := syncBody(op, p)
	if err != nil {
		return nil, fmt.Errorf("erp: %s: %w", OpSyncClient, err)
	}
	raw, status, err := c.post(ctx, OpSyncClient, c.cfg.ClientsPath, body, nil)
	if err != nil {
		return nil, err
	}
	var a syncAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, undecodable(OpSyncClient, status, err)
	}
	if a.CodigoCliente == "" {
		if op == OperationCreate || p.CodigoCliente == "" {
			return nil, undecodable(OpSyncClient, status, fmt.Errorf("answer without codigo_cliente"))
		}
		a.CodigoCliente = p.CodigoCliente
	}
	return &SyncResult{CodigoCliente: a.CodigoCliente, Message: a.Mensaje, Raw: json.RawMessage(raw)}, nil
}

// payloadFields are the ERP names of the public fields; extra_fields may not reuse them.
var payloadFields = map[string]bool{
	"operacion": true, "codigo_cliente": true, "codigo_empresa": true, "nombre_cliente": true,
	"identificacion": true, "email": true, "numero_telefono_1": true, "numero_telefono_2": true,
	"direccion_1": true, "codigo_vendedor": true, "termino_pagos": true, "limite_credito_1": true,
	"limite_credito_2": true, "codigo_sucursal": true, "localizacion": true, "lista_precios": true,
	"nivel_riesgo": true,
	// The public names that are renamed on the wire would be ambiguous as extra fields.
	"telefono_1": true, "telefono_2": true,
}

// syncBody builds the ERP payload. Members are emitted in sorted key order (encoding/json
// sorts map keys), which keeps the golden files stable.
func syncBody(op Operation, p ClientPayload) ([]byte, error) {
	if op != OperationCreate && op != OperationUpdate {
		return nil, fmt.Errorf("%w: operacion must be 0 (create) or 1 (update), got %d", ErrInvalidRequest, int(op))
	}
	var missing []string
	for name, v := range map[string]string{"codigo_empresa": p.CodigoEmpresa, "nombre_cliente": p.NombreCliente, "identificacion": p.Identificacion} {
		if strings.TrimSpace(v) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("%w: %s required", ErrInvalidRequest, strings.Join(missing, ", "))
	}

	m := make(map[string]json.RawMessage, 20)
	if len(bytes.TrimSpace(p.ExtraFields)) > 0 && string(bytes.TrimSpace(p.ExtraFields)) != "null" {
		if err := json.Unmarshal(p.ExtraFields, &m); err != nil {
			return nil, fmt.Errorf("%w: extra_fields must be a JSON object: %v", ErrInvalidRequest, err)
		}
		for k := range m {
			if payloadFields[k] {
				return nil, fmt.Errorf("%w: extra_fields key %q collides with a client field", ErrInvalidRequest, k)
			}
		}
	}
	m["operacion"] = json.RawMessage(fmt.Sprint(int(op)))
	for name, v := range map[string]string{
		"codigo_cliente":    p.CodigoCliente,
		"codigo_empresa":    p.CodigoEmpresa,
		"nombre_cliente":    p.NombreCliente,
		"identificacion":    p.Identificacion,
		"email":             p.Email,
		"numero_telefono_1": p.Telefono1,
		"numero_telefono_2": p.Telefono2,
		"direccion_1":       p.Direccion1,
		"codigo_vendedor":   p.CodigoVendedor,
		"termino_pagos":     p.TerminoPagos,
		"codigo_sucursal":   p.CodigoSucursal,
		"localizacion":      p.Localizacion,
		"lista_precios":     p.ListaPrecios,
		"nivel_riesgo":      p.NivelRiesgo,
	} {
		if v == "" {
			continue
		}
		b, err := marshal(v)
		if err != nil {
			return nil, err
		}
		m[name] = b
	}
	for name, d := range map[string]*decimal.Decimal{"limite_credito_1": p.LimiteCredito1, "limite_credito_2": p.LimiteCredito2} {
		if d != nil {
			m[name] = json.RawMessage(decimalNumber(*d))
		}
	}
	return marshal(m)
}

// decimalNumber writes d as a JSON number with the digits and scale it holds (1500.50 stays
// 1500.50): no float64 on the way, and never an exponent.
func decimalNumber(d decimal.Decimal) string {
	if exp := d.Exponent(); exp < 0 {
		return d.StringFixed(-exp)
	}
	return d.String()
}

// marshal is json.Marshal without HTML escaping: "&" in a name stays "&" on the wire.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func undecodable(op string, status int, err error) error {
	return &TransportError{Op: op, HTTPStatus: status, Err: fmt.Errorf("%w: %w", ErrUndecodable, err)}
}
