package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/platform/integrations/credit/clients"
	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/validation"
)

// formatTimePtr is httpx.FormatTime (every timestamp of both services' answers) of a time
// that may be absent.
func formatTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := httpx.FormatTime(*t)
	return &s
}

// jsonDecimal renders a nullable decimal as a JSON number with two decimals (or null).
func jsonDecimal(d decimal.NullDecimal) json.RawMessage {
	if !d.Valid {
		return json.RawMessage("null")
	}
	return json.RawMessage(d.Decimal.StringFixed(2))
}

// rawJSON answers a stored JSON document as it is, or null.
func rawJSON(r clients.RawJSON) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("null")
	}
	return json.RawMessage(r)
}

// decodeClientFields reads a create or update body member by member into clients.Fields: a
// member sent with the wrong JSON type marks its field Invalid, for the domain to report among
// the input's other problems. A limit is plain decimal text, quoted or not (an empty string is
// no limit); extra_fields is an object whose values are kept as sent.
func decodeClientFields(c *fiber.Ctx) (clients.Fields, error) {
	var members map[string]json.RawMessage
	if err := httpx.Bind(c, &members); err != nil {
		return clients.Fields{}, err
	}
	return fieldsOf(members), nil
}

// fieldsOf reads the members of a client body into clients.Fields.
func fieldsOf(members map[string]json.RawMessage) clients.Fields {
	var f clients.Fields
	for name, field := range f.TextFields() {
		*field = textField(member(members, name))
	}
	f.LimiteCredito1 = limitField(member(members, clients.NameLimiteCredito1))
	f.LimiteCredito2 = limitField(member(members, clients.NameLimiteCredito2))
	f.ExtraFields = extraFieldsField(member(members, clients.NameExtraFields))
	return f
}

// member finds a member like encoding/json does: the exact name, else ignoring case.
func member(members map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	if raw, ok := members[name]; ok {
		return raw, true
	}
	for k, raw := range members {
		if bytes.EqualFold([]byte(k), []byte(name)) {
			return raw, true
		}
	}
	return nil, false
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func textField(raw json.RawMessage, sent bool) clients.Field[string] {
	var v string
	switch {
	case !sent:
		return clients.Field[string]{}
	case isNull(raw):
		return clients.FieldNull[string]()
	case json.Unmarshal(raw, &v) != nil:
		return clients.FieldInvalid[string]()
	}
	return clients.FieldValue(v)
}

func limitField(raw json.RawMessage, sent bool) clients.Field[decimal.Decimal] {
	if !sent {
		return clients.Field[decimal.Decimal]{}
	}
	raw = bytes.TrimSpace(raw)
	text := string(raw)
	if len(raw) > 0 && raw[0] == '"' {
		if json.Unmarshal(raw, &text) != nil {
			text = "-" // not decimal text
		}
	}
	switch {
	case isNull(raw), text == "":
		// An empty limit in a form means "no limit", not a malformed number.
		return clients.FieldNull[decimal.Decimal]()
	case !validation.PlainDecimal(text):
		return clients.FieldInvalid[decimal.Decimal]()
	}
	d, err := decimal.NewFromString(text)
	if err != nil {
		return clients.FieldInvalid[decimal.Decimal]()
	}
	return clients.FieldValue(d)
}

func extraFieldsField(raw json.RawMessage, sent bool) clients.Field[clients.ExtraFields] {
	var m map[string]json.RawMessage
	switch {
	case !sent:
		return clients.Field[clients.ExtraFields]{}
	case isNull(raw):
		return clients.FieldNull[clients.ExtraFields]()
	case json.Unmarshal(raw, &m) != nil || m == nil:
		return clients.FieldInvalid[clients.ExtraFields]()
	}
	return clients.FieldValue(clients.ExtraFields(m))
}

// clientJSON is the client record of the specification: id as a string, limits as JSON numbers
// with two decimals, timestamps in UTC ISO 8601 with milliseconds.
type clientJSON struct {
	ID             string              `json:"id"`
	CodigoCliente  *string             `json:"codigo_cliente"`
	CodigoEmpresa  string              `json:"codigo_empresa"`
	NombreCliente  string              `json:"nombre_cliente"`
	Identificacion string              `json:"identificacion"`
	Email          *string             `json:"email"`
	Telefono1      *string             `json:"telefono_1"`
	Telefono2      *string             `json:"telefono_2"`
	Direccion1     *string             `json:"direccion_1"`
	CodigoVendedor *string             `json:"codigo_vendedor"`
	TerminoPagos   *string             `json:"termino_pagos"`
	LimiteCredito1 json.RawMessage     `json:"limite_credito_1"`
	LimiteCredito2 json.RawMessage     `json:"limite_credito_2"`
	CodigoSucursal *string             `json:"codigo_sucursal"`
	Localizacion   *string             `json:"localizacion"`
	ListaPrecios   *string             `json:"lista_precios"`
	NivelRiesgo    *string             `json:"nivel_riesgo"`
	ExtraFields    clients.ExtraFields `json:"extra_fields"`
	ERPSynced      bool                `json:"erp_synced"`
	ERPResponse    json.RawMessage     `json:"erp_response"`
	ERPSyncedAt    *string             `json:"erp_synced_at"`
	SourceSystem   string              `json:"source_system"`
	CreatedAt      string              `json:"created_at"`
	UpdatedAt      string              `json:"updated_at"`
}

func toClientJSON(c *clients.Client) clientJSON {
	return clientJSON{
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
		LimiteCredito1: jsonDecimal(c.LimiteCredito1),
		LimiteCredito2: jsonDecimal(c.LimiteCredito2),
		CodigoSucursal: c.CodigoSucursal,
		Localizacion:   c.Localizacion,
		ListaPrecios:   c.ListaPrecios,
		NivelRiesgo:    c.NivelRiesgo,
		ExtraFields:    c.ExtraFields,
		ERPSynced:      c.ERPSynced,
		ERPResponse:    rawJSON(c.ERPResponse),
		ERPSyncedAt:    formatTimePtr(c.ERPSyncedAt),
		SourceSystem:   c.SourceSystem,
		CreatedAt:      httpx.FormatTime(c.CreatedAt),
		UpdatedAt:      httpx.FormatTime(c.UpdatedAt),
	}
}

// localRecordJSON is the short view of a local client that the exists and from-creditsystem
// answers carry as local_record.
type localRecordJSON struct {
	ID             string  `json:"id"`
	CodigoCliente  *string `json:"codigo_cliente"`
	CodigoEmpresa  string  `json:"codigo_empresa"`
	Identificacion string  `json:"identificacion"`
	ERPSynced      bool    `json:"erp_synced"`
	SourceSystem   string  `json:"source_system"`
	CreatedAt      string  `json:"created_at"`
	UpdatedAt      string  `json:"updated_at"`
}

func localRecord(c *clients.Client) *localRecordJSON {
	if c == nil {
		return nil
	}
	return &localRecordJSON{
		ID:             strconv.FormatInt(c.ID, 10),
		CodigoCliente:  c.CodigoCliente,
		CodigoEmpresa:  c.CodigoEmpresa,
		Identificacion: c.Identificacion,
		ERPSynced:      c.ERPSynced,
		SourceSystem:   c.SourceSystem,
		CreatedAt:      httpx.FormatTime(c.CreatedAt),
		UpdatedAt:      httpx.FormatTime(c.UpdatedAt),
	}
}

// preCheckJSON is erp_pre_check.
type preCheckJSON struct {
	CheckedAt string `json:"checked_at"`
	Found     bool   `json:"found"`
}

func preCheckAnswer(p clients.PreCheck) preCheckJSON {
	return preCheckJSON{CheckedAt: httpx.FormatTime(p.CheckedAt), Found: p.Found}
}

// creditSystemClientJSON is the client object of the from-creditsystem 201.
type creditSystemClientJSON struct {
	ID             string  `json:"id"`
	CodigoCliente  *string `json:"codigo_cliente"`
	CodigoEmpresa  string  `json:"codigo_empresa"`
	NombreCliente  string  `json:"nombre_cliente"`
	Identificacion string  `json:"identificacion"`
	Telefono1      *string `json:"telefono_1"`
	ERPSynced      bool    `json:"erp_synced"`
	SourceSystem   string  `json:"source_system"`
	CreatedAt      string  `json:"created_at"`
	UpdatedAt      string  `json:"updated_at"`
}

// existsJSON is the 409 of from-creditsystem (EXISTS_IN_ERP and EXISTS_LOCAL).
type existsJSON struct {
	Success     bool              `json:"success"`
	Reason      string            `json:"reason"`
	ERPClient   *erp.ClientRecord `json:"erp_client"`
	LocalRecord *localRecordJSON  `json:"local_record"`
	ERPPreCheck preCheckJSON      `json:"erp_pre_check"`
	Message     string            `json:"message"`
	Hint        string            `json:"hint"`
}

func existsAnswer(e *clients.ExistsError) existsJSON {
	a := existsJSON{
		Reason:      e.Reason,
		LocalRecord: localRecord(e.Local),
		ERPPreCheck: preCheckAnswer(e.PreCheck),
	}
	if e.Reason == clients.ReasonExistsInERP {
		a.ERPClient = e.ERPClient
		a.Message = fmt.Sprintf("The client already exists in the ERP with codigo_cliente %s", e.ERPClient.CodigoCliente)
		a.Hint = "Do not create it again: use the existing ERP client (POST /clients/exists shows it)."
		return a
	}
	a.Message = "The client already exists in the local registry"
	if e.Local != nil && !e.Local.ERPSynced {
		a.Message += " and is pending synchronization to the ERP"
	}
	a.Hint = "Nothing was created. Update it with PUT /clients/:codigo or send it to the ERP with POST /clients/:codigo/sync-erp."
	return a
}
