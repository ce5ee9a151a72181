package credit

import (
	"encoding/json"
	"testing"
)

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
		var in ClientFields
		if json.Unmarshal(body, &in) != nil {
			return
		}
		for _, create := range []bool{true, false} {
			fields := in
			if err := fields.Validate(create); err != nil {
				continue
			}
			c := &Client{CodigoEmpresa: "E", NombreCliente: "N", Identificacion: "I"}
			fields.apply(c)
			out, err := json.Marshal(c)
			if err != nil || !json.Valid(out) {
				t.Fatalf("record of accepted input %q does not marshal: %v", body, err)
			}
			for k := range c.ExtraFields {
				if extraFamilyOf(k) == nil {
					t.Fatalf("accepted unknown extra field %q", k)
				}
			}
			_ = Payload(c)
		}
	})
}
