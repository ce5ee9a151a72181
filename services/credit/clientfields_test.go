package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/credit"
	"github.com/platform/integrations/credit/clients"
	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// decodeFields reads a client body as the create and update handlers do.
func decodeFields(t *testing.T, body string) clients.Fields {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &members); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return fieldsOf(members)
}

func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var ve *clients.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v is not a *clients.ValidationError", err)
	}
	return ve.Strings()
}

func TestClientFieldsValidate(t *testing.T) {
	valid := `"codigo_empresa":"000598","nombre_cliente":"Ana","identificacion":"0102030405"`
	cases := []struct {
		name      string
		body      string
		forCreate bool
		want      []string
	}{
		{"minimal create", `{` + valid + `}`, true, nil},
		{"every field", `{` + valid + `,"codigo_cliente":"C1","email":"ana@example.com","telefono_1":"0991","telefono_2":"0992",
			"direccion_1":"Av. 1","codigo_vendedor":"V1","termino_pagos":"30D","limite_credito_1":"1500.50","limite_credito_2":2000,
			"codigo_sucursal":"S1","localizacion":"UIO","lista_precios":"L1","nivel_riesgo":"BAJO",
			"extra_fields":{"lista_datos_1":"A","alfanumerico_10":"X9","valor_3":12.5,"valor_4":"7.25","fecha_1":"2026-02-28",
			"booleano_1":1,"booleano_2":"0","texto_1":"libre"}}`, true, nil},
		{"missing required on create", `{}`, true, []string{
			"codigo_empresa is required", "nombre_cliente is required", "identificacion is required"}},
		{"blank and null required", `{"codigo_empresa":"  ","nombre_cliente":null,"identificacion":""}`, true, []string{
			"codigo_empresa is required", "nombre_cliente is required", "identificacion is required"}},
		{"update checks only what is sent", `{"email":"x@example.com"}`, false, nil},
		{"update cannot clear a required field", `{"nombre_cliente":null}`, false, []string{"nombre_cliente is required"}},
		{"update may clear an optional field", `{"email":null,"limite_credito_1":null,"extra_fields":null}`, false, nil},
		{"invalid email", `{` + valid + `,"email":"not-an-email"}`, true, []string{"email must be a valid e-mail address"}},
		{"limit not a number", `{` + valid + `,"limite_credito_1":"abc"}`, true, []string{"limite_credito_1 must be a numeric string"}},
		{"limit with an exponent", `{` + valid + `,"limite_credito_1":"1e3"}`, true, []string{"limite_credito_1 must be a numeric string"}},
		{"limit as a JSON number", `{` + valid + `,"limite_credito_1":1500.5}`, true, nil},
		{"limit as a JSON number with an exponent", `{` + valid + `,"limite_credito_1":1e-999999999}`, true, []string{"limite_credito_1 must be a numeric string"}},
		{"trailing zeros are not decimals", `{` + valid + `,"limite_credito_1":"10.5000"}`, true, nil},
		{"limit of wrong type", `{` + valid + `,"limite_credito_2":true}`, true, []string{"limite_credito_2 must be a numeric string"}},
		{"limit with three decimals", `{` + valid + `,"limite_credito_1":"1.005"}`, true, []string{"limite_credito_1 must have at most 2 decimal places"}},
		{"limit too large for decimal(14,2)", `{` + valid + `,"limite_credito_1":"1000000000000"}`, true, []string{"limite_credito_1 must be at most 999999999999.99"}},
		{"negative limit", `{` + valid + `,"limite_credito_1":"-1"}`, true, []string{"limite_credito_1 must not be negative"}},
		{"empty limit is no limit", `{` + valid + `,"limite_credito_1":""}`, true, nil},
		{"string over its maximum", `{"codigo_empresa":"` + strings.Repeat("9", 21) + `","nombre_cliente":"` + strings.Repeat("ñ", 256) +
			`","identificacion":"` + strings.Repeat("1", 51) + `","codigo_cliente":"` + strings.Repeat("c", 81) + `"}`, true, []string{
			"codigo_cliente must be at most 80 characters long", "codigo_empresa must be at most 20 characters long",
			"nombre_cliente must be at most 255 characters long", "identificacion must be at most 50 characters long"}},
		{"characters, not bytes", `{"codigo_empresa":"000598","nombre_cliente":"` + strings.Repeat("ñ", 255) + `","identificacion":"1"}`, true, nil},
		{"string of wrong type", `{` + valid + `,"telefono_1":991}`, true, []string{"telefono_1 must be a string"}},
		{"extra_fields not an object", `{` + valid + `,"extra_fields":[1]}`, true, []string{"extra_fields must be an object"}},
		{"unknown extra field", `{` + valid + `,"extra_fields":{"color":"red","valor_11":1,"valor_0":1,"texto_01":"x"}}`, true, []string{
			"extra_fields.color is not a known extra field", "extra_fields.texto_01 is not a known extra field",
			"extra_fields.valor_0 is not a known extra field", "extra_fields.valor_11 is not a known extra field"}},
		{"extra families", `{` + valid + `,"extra_fields":{"valor_1":"abc","fecha_1":"2026-02-30","fecha_2":"28/02/2026","booleano_1":2,
			"booleano_2":"true","texto_1":"` + strings.Repeat("a", clients.MaxExtraTexto+1) + `","lista_datos_1":5,"alfanumerico_1":{}}}`, true, []string{
			"extra_fields.alfanumerico_1 must be a string", "extra_fields.booleano_1 must be 0, 1, true or false", "extra_fields.booleano_2 must be 0, 1, true or false",
			"extra_fields.fecha_1 must be a date in yyyy-mm-dd format", "extra_fields.fecha_2 must be a date in yyyy-mm-dd format",
			"extra_fields.lista_datos_1 must be a string or an array of strings", "extra_fields.texto_1 must be a string at most 32000 characters long",
			"extra_fields.valor_1 must be numeric"}},
		{"valor with an exponent or too many digits", `{` + valid + `,"extra_fields":{"valor_1":"1e999999999","valor_2":1e400,"valor_3":-0.5e-3,
			"valor_4":"` + strings.Repeat("9", 39) + `","valor_5":` + strings.Repeat("1", 20) + `.` + strings.Repeat("2", 19) + `}}`, true, []string{
			"extra_fields.valor_1 must be a number in plain decimal notation (no exponent) of at most 38 digits",
			"extra_fields.valor_2 must be a number in plain decimal notation (no exponent) of at most 38 digits",
			"extra_fields.valor_3 must be a number in plain decimal notation (no exponent) of at most 38 digits",
			"extra_fields.valor_4 must be a number in plain decimal notation (no exponent) of at most 38 digits",
			"extra_fields.valor_5 must be a number in plain decimal notation (no exponent) of at most 38 digits"}},
		{"valor at its limits", `{` + valid + `,"extra_fields":{"valor_1":"-` + strings.Repeat("9", 38) + `","valor_2":` + strings.Repeat("1", 20) + `.` + strings.Repeat("2", 18) + `,"valor_3":0}}`, true, nil},
		{"texto at its maximum", `{` + valid + `,"extra_fields":{"texto_10":"` + strings.Repeat("é", clients.MaxExtraTexto) + `","valor_10":null}}`, true, nil},
		{"one entry per problem", `{"codigo_empresa":"000598","identificacion":"1","email":"bad","limite_credito_1":"x","extra_fields":{"zzz":1}}`, true, []string{
			"nombre_cliente is required", "email must be a valid e-mail address", "limite_credito_1 must be a numeric string",
			"extra_fields.zzz is not a known extra field"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := decodeFields(t, tc.body)
			got := problemsOf(t, f.Validate(tc.forCreate))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("problems\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestApplyRewritesExtraStrings(t *testing.T) {
	c := &clients.Client{}
	f := decodeFields(t, "{\"extra_fields\":{\"texto_1\":\"a\\ud800b\",\"texto_2\":\"\\udc00\",\"texto_3\":\"ok \\ud83d\\ude00 <&>\",\"texto_4\":\"x\xffy\"}}")
	if err := f.Validate(false); err != nil {
		t.Fatal(err)
	}
	f.Apply(c)
	want := map[string]string{"texto_1": "\"a\uFFFDb\"", "texto_2": "\"\uFFFD\"", "texto_3": "\"ok \U0001F600 <&>\"", "texto_4": "\"x\uFFFDy\""}
	for k, w := range want {
		if got := string(c.ExtraFields[k]); got != w {
			t.Errorf("extra_fields.%s stored as %s, want %s: lone surrogates and invalid UTF-8 become U+FFFD", k, got, w)
		}
	}
}

func TestApplyChangesOnlyWhatIsSent(t *testing.T) {
	email, tel := "old@example.com", "0991"
	c := &clients.Client{NombreCliente: "Ana", Identificacion: "1", CodigoEmpresa: "E", Email: &email, Telefono1: &tel,
		ExtraFields: clients.ExtraFields{"valor_1": json.RawMessage("1"), "texto_1": json.RawMessage(`"a"`)}}
	f := decodeFields(t, `{"nombre_cliente":" Ana María ","email":null,"extra_fields":{"valor_1":null,"fecha_1":"2026-01-01",
		"valor_2":"7.50","booleano_1":"1","valor_3": 1.10 }}`)
	if err := f.Validate(false); err != nil {
		t.Fatal(err)
	}
	f.Apply(c)
	if c.NombreCliente != "Ana María" {
		t.Errorf("nombre_cliente %q, want trimmed new value", c.NombreCliente)
	}
	if c.Email != nil {
		t.Errorf("email %v, want cleared by null", *c.Email)
	}
	if c.Telefono1 == nil || *c.Telefono1 != "0991" || c.Identificacion != "1" {
		t.Errorf("fields not sent changed: %+v", c)
	}
	got, _ := json.Marshal(c.ExtraFields)
	if string(got) != `{"booleano_1":1,"fecha_1":"2026-01-01","texto_1":"a","valor_2":7.5,"valor_3":1.10}` {
		t.Errorf("extra_fields %s, want valor_1 removed, fecha_1 added, texto_1 kept, numeric strings as numbers", got)
	}
}

// TestExtraListasAndBooleanos: lista_datos_n takes one string or an array of strings (the
// specification's "list values"); booleano_n (1 = true, 0 = false) takes 0/1 as a number or a
// string, or a JSON boolean, and is stored as the number 1 or 0.
func TestExtraListasAndBooleanos(t *testing.T) {
	cases := []struct {
		name   string
		value  string // JSON of the one extra field sent
		key    string
		stored string // JSON stored after apply; "" when the value is refused
		want   string // the problem when refused
	}{
		{"lista one value", `"ROJO"`, "lista_datos_1", `"ROJO"`, ""},
		{"lista array of values", `["ROJO","AZUL"]`, "lista_datos_2", `["ROJO","AZUL"]`, ""},
		{"lista empty array", `[]`, "lista_datos_3", `[]`, ""},
		{"lista array strings rewritten", `["a\ud800b","<&>"]`, "lista_datos_4", "[\"a\uFFFDb\",\"<&>\"]", ""},
		{"lista number refused", `5`, "lista_datos_5", "", "extra_fields.lista_datos_5 must be a string or an array of strings"},
		{"lista array of numbers refused", `["A",1]`, "lista_datos_6", "", "extra_fields.lista_datos_6 must be a string or an array of strings"},
		{"lista array holding null refused", `["A",null]`, "lista_datos_7", "", "extra_fields.lista_datos_7 must be a string or an array of strings"},
		{"lista nested array refused", `[["A"]]`, "lista_datos_8", "", "extra_fields.lista_datos_8 must be a string or an array of strings"},
		{"lista object refused", `{"a":"b"}`, "lista_datos_9", "", "extra_fields.lista_datos_9 must be a string or an array of strings"},
		{"booleano true", `true`, "booleano_1", `1`, ""},
		{"booleano false", `false`, "booleano_2", `0`, ""},
		{"booleano 1", `1`, "booleano_3", `1`, ""},
		{"booleano string 0", `"0"`, "booleano_4", `0`, ""},
		{"booleano 2 refused", `2`, "booleano_5", "", "extra_fields.booleano_5 must be 0, 1, true or false"},
		{"booleano 1.0 refused", `1.0`, "booleano_6", "", "extra_fields.booleano_6 must be 0, 1, true or false"},
		{"booleano string true refused", `"true"`, "booleano_7", "", "extra_fields.booleano_7 must be 0, 1, true or false"},
		{"booleano array refused", `[true]`, "booleano_8", "", "extra_fields.booleano_8 must be 0, 1, true or false"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := decodeFields(t, `{"extra_fields":{"`+tc.key+`":`+tc.value+`}}`)
			got := problemsOf(t, f.Validate(false))
			if tc.stored == "" {
				if len(got) != 1 || got[0] != tc.want {
					t.Fatalf("problems %q, want %q", got, tc.want)
				}
				return
			}
			if got != nil {
				t.Fatalf("problems %q, want none", got)
			}
			c := &clients.Client{}
			f.Apply(c)
			if s := string(c.ExtraFields[tc.key]); s != tc.stored {
				t.Fatalf("stored %s, want %s", s, tc.stored)
			}
		})
	}
}

// FuzzClientFields feeds arbitrary request bodies through decoding, validation and the mapping to
// the record and the ERP payload: none of it may panic, and whatever validation accepts must
// produce a record whose JSON is valid and whose extra fields are all known names.
func FuzzClientFields(f *testing.F) {
	for _, seed := range []string{
		`{"codigo_empresa":"000598","nombre_cliente":"Ana","identificacion":"0102030405"}`,
		`{"codigo_empresa":"1","nombre_cliente":"B","identificacion":"2","limite_credito_1":"1500.50","limite_credito_2":12,
			"extra_fields":{"valor_1":"7.25","booleano_1":"1","fecha_1":"2026-02-28","texto_1":"x","lista_datos_10":"L"}}`,
		`{"email":null,"limite_credito_1":"","extra_fields":{"valor_1":null}}`,
		`{"limite_credito_1":"1e400","extra_fields":{"valor_2":1e400,"booleano_2":1.0}}`,
		`[]`, `null`, `{"extra_fields":[]}`, `{"nombre_cliente":{"a":1}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var members map[string]json.RawMessage
		if json.Unmarshal(body, &members) != nil {
			return
		}
		in := fieldsOf(members)
		for _, create := range []bool{true, false} {
			fields := in
			if err := fields.Validate(create); err != nil {
				continue
			}
			c := &clients.Client{CodigoEmpresa: "E", NombreCliente: "N", Identificacion: "I"}
			fields.Apply(c)
			out, err := json.Marshal(toClientJSON(c))
			if err != nil || !json.Valid(out) {
				t.Fatalf("record of accepted input %q does not marshal: %v", body, err)
			}
			if p := clients.ValidateExtraFields(c.ExtraFields); p != nil {
				t.Fatalf("accepted extra fields that fail their own rules: %v", p)
			}
			_ = clients.Payload(c)
		}
	})
}

// BenchmarkClientFieldsValidate: decoding and validating a full create body with extra fields.
func BenchmarkClientFieldsValidate(b *testing.B) {
	body := []byte(`{"codigo_empresa":"000598","nombre_cliente":"Ana Pérez","identificacion":"0102030405","email":"ana@example.com",
		"telefono_1":"0991","limite_credito_1":"1500.50","limite_credito_2":"2000","extra_fields":{"valor_1":"7.25","booleano_1":1,
		"fecha_1":"2026-02-28","texto_1":"nota","lista_datos_1":"A","alfanumerico_1":"X1"}}`)
	b.ReportAllocs()
	for b.Loop() {
		var f clients.Fields
		if err := json.Unmarshal(body, &f); err != nil {
			b.Fatal(err)
		}
		if err := f.Validate(true); err != nil {
			b.Fatal(err)
		}
	}
}

// TestClientJSON: the record as the API answers it, read back from the store on both engines:
// id as a string, limits as JSON numbers with two decimals, timestamps in UTC ISO 8601 with
// milliseconds, extra fields with every digit.
func TestClientJSON(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		if _, err := storage.Migrate(t.Context(), tg.DB, credit.MigrationsTable, credit.Migrations); err != nil {
			t.Fatal(err)
		}
		s := clients.NewStore(tg.DB)
		codigo := "C-1"
		c := &clients.Client{CodigoEmpresa: "000598", Identificacion: "0102030405", NombreCliente: "José Ñandú", CodigoCliente: &codigo,
			SourceSystem:   clients.SourceDashboard,
			LimiteCredito1: decimal.NewNullDecimal(decimal.RequireFromString("999999999999.99")),
			LimiteCredito2: decimal.NewNullDecimal(decimal.RequireFromString("1500.50")),
			ExtraFields:    clients.ExtraFields{"valor_1": json.RawMessage("12345678901234567890.123456789")}}
		if err := s.Insert(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		got, err := s.ByCodigo(t.Context(), codigo)
		if err != nil {
			t.Fatal(err)
		}
		have, _ := json.Marshal(toClientJSON(got))
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(have))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		if m["limite_credito_1"] != json.Number("999999999999.99") || m["limite_credito_2"] != json.Number("1500.50") {
			t.Fatalf("limits %v %v: want exact JSON numbers", m["limite_credito_1"], m["limite_credito_2"])
		}
		if m["id"] != fmt.Sprint(c.ID) {
			t.Fatalf("id %#v, want the string %q", m["id"], fmt.Sprint(c.ID))
		}
		if _, err := time.Parse(time.RFC3339, m["created_at"].(string)); err != nil || m["created_at"].(string)[23:] != "Z" {
			t.Fatalf("created_at %v: want ISO 8601 UTC", m["created_at"])
		}
		extra := m["extra_fields"].(map[string]any)
		if extra["valor_1"] != json.Number("12345678901234567890.123456789") {
			t.Fatalf("extra valor_1 %v: want every digit kept", extra["valor_1"])
		}
	})
}
