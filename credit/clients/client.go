package clients

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/validation"
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
	// ErrExists: the pair (identificacion, codigo_empresa) is already registered locally.
	ErrExists = errors.New("clients: a client with this identificacion and codigo_empresa already exists")
	// ErrNotFound: no local client answers to the codigo.
	ErrNotFound = errors.New("clients: client not found")
	// ErrCodigoClienteTaken: another local client already holds the codigo_cliente.
	ErrCodigoClienteTaken = errors.New("clients: codigo_cliente already belongs to another client")
	// ErrSyncInProgress: another request is synchronising the same client to the ERP.
	ErrSyncInProgress = errors.New("clients: an ERP synchronisation of this client is already in progress")
)

// NotFoundError names the codigo no local client answers to; errors.Is(err, ErrNotFound) holds.
type NotFoundError struct{ Codigo string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no local client with codigo_cliente %q", e.Codigo)
}

// Is makes errors.Is(err, ErrNotFound) hold.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// ValidationError lists every problem of a client's fields, one entry each, in a stable order
// (fields in specification order, then extra_fields keys sorted).
type ValidationError = validation.Error

// Problem is one entry of a ValidationError.
type Problem = validation.Problem

// Client is one client of the local registry (specification "Client record"). Nullable columns
// are pointers (or NullDecimal, nil maps).
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
	// SearchText is what the list's search matches (nombre_cliente, identificacion and
	// codigo_cliente, lower-cased in Go so that case is ignored beyond ASCII on SQLite too).
	// The store keeps it.
	SearchText string `bun:"search_text,notnull"`
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
		return fmt.Errorf("clients: scan extra_fields: %w", err)
	}
	*e = m
	return nil
}

// RawJSON is a JSON document kept as received (NULL when empty).
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

func jsonBytes(src any) ([]byte, error) {
	switch v := src.(type) {
	case nil:
		return nil, nil
	case []byte:
		return bytes.Clone(v), nil
	case string:
		return []byte(v), nil
	default:
		return nil, fmt.Errorf("clients: cannot scan %T as JSON", src)
	}
}
