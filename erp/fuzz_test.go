package erp

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecodeLookup feeds arbitrary answers to the lookup decoder: it never panics, and a
// result it accepts as found always has a client with a codigo_cliente.
func FuzzDecodeLookup(f *testing.F) {
	for _, seed := range []string{
		`{"error_api":false,"mensaje":"cliente no encontrado","encontrado":false,"cliente":null}`,
		`{"error_api":false,"encontrado":true,"cliente":{"codigo_cliente":"C-1","numero_telefono_1":null,"inactivo":1}}`,
		`{"encontrado":true,"cliente":{}}`,
		`{"encontrado":"1"}`,
		`[]`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, err := decodeLookup(raw, 200)
		if err != nil {
			if !errors.Is(err, ErrUndecodable) {
				t.Fatalf("error %v does not wrap ErrUndecodable", err)
			}
			return
		}
		if res.Found && (res.Client == nil || res.Client.CodigoCliente == "") {
			t.Fatalf("found without codigo_cliente: %+v", res)
		}
		if !res.Found && res.Client != nil {
			t.Fatalf("not found but a client: %+v", res.Client)
		}
	})
}

// FuzzSyncBody: whatever extra_fields and strings come in, the payload is either refused with
// ErrInvalidRequest or is a JSON object with the right operacion, the renamed phones and every
// extra field unchanged.
func FuzzSyncBody(f *testing.F) {
	f.Add("000598", "MARIA", "0102030405", "0991", `{"valor_1":12.50,"texto_1":"x"}`, 0)
	f.Add("1", "N", "I", "", `null`, 1)
	f.Add("1", "N", "I", "", `{"nombre_cliente":"X"}`, 0)
	f.Add("1", "N", "I", "", `{"a":1,"a":2}`, 1)
	f.Add("", "N", "I", "", ``, 3)
	f.Fuzz(func(t *testing.T, empresa, nombre, identificacion, telefono, extra string, op int) {
		p := ClientPayload{CodigoEmpresa: empresa, NombreCliente: nombre, Identificacion: identificacion,
			Telefono1: telefono, ExtraFields: json.RawMessage(extra)}
		body, err := syncBody(Operation(op), p)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("error %v does not wrap ErrInvalidRequest", err)
			}
			return
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("payload is not a JSON object: %v\n%s", err, body)
		}
		if string(got["operacion"]) != map[int]string{0: "0", 1: "1"}[op] {
			t.Fatalf("operacion = %s for op %d", got["operacion"], op)
		}
		if _, ok := got["telefono_1"]; ok {
			t.Fatal("telefono_1 sent under its public name")
		}
		if telefono != "" && got["numero_telefono_1"] == nil {
			t.Fatal("telefono_1 not sent as numero_telefono_1")
		}
		var extras map[string]json.RawMessage
		if json.Unmarshal([]byte(extra), &extras) == nil {
			for k, v := range extras {
				var want bytes.Buffer
				if err := json.Compact(&want, v); err != nil {
					t.Fatalf("extra field %s: %v", k, err)
				}
				if !bytes.Equal(got[k], want.Bytes()) {
					t.Fatalf("extra field %s = %s, want %s unchanged", k, got[k], want.Bytes())
				}
			}
		}
	})
}
