package credit

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
)

// Source systems recorded in Client.SourceSystem.
const (
	// SourceCreditSystem marks a client created or last updated with the ServiceKey.
	SourceCreditSystem = "CREDITSYSTEM"
	// SourceDashboard marks a client created or last updated with a dashboard JWT.
	SourceDashboard = "dashboard"
)

// Sentinel errors of the client registry, reached with errors.Is.
var (
	// ErrClientExists: the pair (identificacion, codigo_empresa) is already registered locally.
	ErrClientExists = errors.New("credit: a client with this identificacion and codigo_empresa already exists")
	// ErrClientNotFound: no local client answers to the codigo.
	ErrClientNotFound = errors.New("credit: client not found")
	// ErrCodigoClienteTaken: another local client already holds the codigo_cliente.
	ErrCodigoClienteTaken = errors.New("credit: codigo_cliente already belongs to another client")
	// ErrClientSyncInProgress: another request is synchronising the same client to the ERP.
	ErrClientSyncInProgress = errors.New("credit: an ERP synchronisation of this client is already in progress")
)

// ClientNotFoundError names the codigo no local client answers to; errors.Is(err,
// ErrClientNotFound) holds.
type ClientNotFoundError struct{ Codigo string }

func (e *ClientNotFoundError) Error() string {
	return fmt.Sprintf("no local client with codigo_cliente %q", e.Codigo)
}

// Is makes errors.Is(err, ErrClientNotFound) hold.
func (e *ClientNotFoundError) Is(target error) bool { return target == ErrClientNotFound }

// ClientValidationError lists every problem found in a client's fields, one entry each, in a
// stable order (fields in specification order, then extra_fields keys sorted).
type ClientValidationError struct {
	Problems []string
}

func (e *ClientValidationError) Error() string {
	return "credit: invalid client: " + strings.Join(e.Problems, "; ")
}

// Client is one client of the local registry (specification "Client record").
//
// Nullable columns are pointers (or NullDecimal / nil maps); JSON marshalling follows the
// specification: id as a string, limits as JSON numbers with two decimals, timestamps in UTC
// ISO 8601 with milliseconds.
type Client struct {
	bun.BaseModel `bun:"table:clients"`

	ID             int64               `bun:"id,pk,autoincrement"`
	CodigoCliente  *string             `bun:"codigo_cliente"`
	CodigoEmpresa  string              `bun:"codigo_empresa,notnull"`
	NombreCliente  string              `bun:"nombre_cliente,notnull"`
	Identificacion string              `bun:"identificacion,notnull"`
	Email          *string             `bun:"email"`
	Telefono1      *string             `bun:"telefono_1"`
	Telefono2      *string             `bun:"telefono_2"`
	Direccion1     *string             `bun:"direccion_1"`
	CodigoVendedor *string             `bun:"codigo_vendedor"`
	TerminoPagos   *string             `bun:"termino_pagos"`
	LimiteCredito1 decimal.NullDecimal `bun:"limite_credito_1"`
	LimiteCredito2 decimal.NullDecimal `bun:"limite_credito_2"`
	CodigoSucursal *string             `bun:"codigo_sucursal"`
	Localizacion   *string             `bun:"localizacion"`
	ListaPrecios   *string             `bun:"lista_precios"`
	NivelRiesgo    *string             `bun:"nivel_riesgo"`
	ExtraFields    ExtraFields         `bun:"extra_fields"`
	ERPSynced      bool                `bun:"erp_synced,notnull"`
	ERPResponse    RawJSON             `bun:"erp_response"`
	ERPSyncedAt    *time.Time          `bun:"erp_synced_at"`
	SourceSystem   string              `bun:"source_system,notnull"`
	CreatedAt      time.Time           `bun:"created_at,notnull"`
	UpdatedAt      time.Time           `bun:"updated_at,notnull"`

	// Version grows with every change of the client's data; a sync only marks the client
	// synced when the version it sent is still current.
	Version int64 `bun:"version,notnull"`
}

// TimeFormat is the ISO 8601 layout of every timestamp the client module answers.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// FormatTime renders t in UTC with TimeFormat.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// JSONDecimal renders a nullable decimal as a JSON number with two decimals (or null).
func JSONDecimal(d decimal.NullDecimal) json.RawMessage {
	if !d.Valid {
		return json.RawMessage("null")
	}
	return json.RawMessage(d.Decimal.StringFixed(2))
}

func jsonTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := FormatTime(*t)
	return &s
}

// MarshalJSON renders the full client record of the specification.
func (c Client) MarshalJSON() ([]byte, error) {
	extra := c.ExtraFields
	return json.Marshal(struct {
		ID             string          `json:"id"`
		CodigoCliente  *string         `json:"codigo_cliente"`
		CodigoEmpresa  string          `json:"codigo_empresa"`
		NombreCliente  string          `json:"nombre_cliente"`
		Identificacion string          `json:"identificacion"`
		Email          *string         `json:"email"`
		Telefono1      *string         `json:"telefono_1"`
		Telefono2      *string         `json:"telefono_2"`
		Direccion1     *string         `json:"direccion_1"`
		CodigoVendedor *string         `json:"codigo_vendedor"`
		TerminoPagos   *string         `json:"termino_pagos"`
		LimiteCredito1 json.RawMessage `json:"limite_credito_1"`
		LimiteCredito2 json.RawMessage `json:"limite_credito_2"`
		CodigoSucursal *string         `json:"codigo_sucursal"`
		Localizacion   *string         `json:"localizacion"`
		ListaPrecios   *string         `json:"lista_precios"`
		NivelRiesgo    *string         `json:"nivel_riesgo"`
		ExtraFields    ExtraFields     `json:"extra_fields"`
		ERPSynced      bool            `json:"erp_synced"`
		ERPResponse    RawJSON         `json:"erp_response"`
		ERPSyncedAt    *string         `json:"erp_synced_at"`
		SourceSystem   string          `json:"source_system"`
		CreatedAt      string          `json:"created_at"`
		UpdatedAt      string          `json:"updated_at"`
	}{
		ID:             strconv.FormatInt(c.ID, 10),
		CodigoCliente:  c.CodigoCliente,
		CodigoEmpresa:  c.CodigoEmpresa,
		NombreCliente:  c.NombreCliente,
		Identificacion: c.Identificacion,
		Email:          c.Email,
		Telefono1:      c.Telefono1,
		Telefono2:      c.Telefono2,
		Direccion1:     c.Direccion1,
		CodigoVendedor: c.CodigoVendedor,
		TerminoPagos:   c.TerminoPagos,
		LimiteCredito1: JSONDecimal(c.LimiteCredito1),
		LimiteCredito2: JSONDecimal(c.LimiteCredito2),
		CodigoSucursal: c.CodigoSucursal,
		Localizacion:   c.Localizacion,
		ListaPrecios:   c.ListaPrecios,
		NivelRiesgo:    c.NivelRiesgo,
		ExtraFields:    extra,
		ERPSynced:      c.ERPSynced,
		ERPResponse:    c.ERPResponse,
		ERPSyncedAt:    jsonTime(c.ERPSyncedAt),
		SourceSystem:   c.SourceSystem,
		CreatedAt:      FormatTime(c.CreatedAt),
		UpdatedAt:      FormatTime(c.UpdatedAt),
	})
}

// LocalRecord is the short view of a local client that the exists and from-creditsystem
// answers carry as local_record.
type LocalRecord struct {
	ID             string  `json:"id"`
	CodigoCliente  *string `json:"codigo_cliente"`
	CodigoEmpresa  string  `json:"codigo_empresa"`
	Identificacion string  `json:"identificacion"`
	ERPSynced      bool    `json:"erp_synced"`
	SourceSystem   string  `json:"source_system"`
	CreatedAt      string  `json:"created_at"`
	UpdatedAt      string  `json:"updated_at"`
}

// LocalRecord returns the short view of c.
func (c *Client) LocalRecord() *LocalRecord {
	if c == nil {
		return nil
	}
	return &LocalRecord{
		ID:             strconv.FormatInt(c.ID, 10),
		CodigoCliente:  c.CodigoCliente,
		CodigoEmpresa:  c.CodigoEmpresa,
		Identificacion: c.Identificacion,
		ERPSynced:      c.ERPSynced,
		SourceSystem:   c.SourceSystem,
		CreatedAt:      FormatTime(c.CreatedAt),
		UpdatedAt:      FormatTime(c.UpdatedAt),
	}
}

// ExtraFields holds the additional ERP fields of a client, each value kept as the JSON the
// caller sent so that numbers keep their exact digits on the way to the ERP.
type ExtraFields map[string]json.RawMessage

// Value stores the fields as a JSON object (NULL when there are none).
func (e ExtraFields) Value() (driver.Value, error) {
	if e == nil {
		return nil, nil
	}
	b, err := json.Marshal(map[string]json.RawMessage(e))
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// Scan reads a JSON object column.
func (e *ExtraFields) Scan(src any) error {
	b, err := jsonBytes(src)
	if err != nil || b == nil {
		*e = nil
		return err
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("credit: scan extra_fields: %w", err)
	}
	*e = m
	return nil
}

// RawJSON is a JSON document stored and answered as received (NULL / null when empty).
type RawJSON json.RawMessage

// Value stores the document as text.
func (r RawJSON) Value() (driver.Value, error) {
	if len(r) == 0 {
		return nil, nil
	}
	return string(r), nil
}

// Scan reads a JSON column.
func (r *RawJSON) Scan(src any) error {
	b, err := jsonBytes(src)
	if err != nil {
		return err
	}
	*r = RawJSON(b)
	return nil
}

// MarshalJSON answers the document itself, or null.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return []byte(r), nil
}

// UnmarshalJSON keeps a copy of the document.
func (r *RawJSON) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*r = nil
		return nil
	}
	*r = append((*r)[:0], b...)
	return nil
}

func jsonBytes(src any) ([]byte, error) {
	switch v := src.(type) {
	case nil:
		return nil, nil
	case []byte:
		return bytes.Clone(v), nil
	case string:
		return []byte(v), nil
	default:
		return nil, fmt.Errorf("credit: cannot scan %T as JSON", src)
	}
}
