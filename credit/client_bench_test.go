package credit_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/platform/integrations/credit"
	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// BenchmarkClientFieldsValidate: decoding and validating a full create body with extra fields.
func BenchmarkClientFieldsValidate(b *testing.B) {
	body := []byte(`{"codigo_empresa":"000598","nombre_cliente":"Ana Pérez","identificacion":"0102030405","email":"ana@example.com",
		"telefono_1":"0991","limite_credito_1":"1500.50","limite_credito_2":"2000","extra_fields":{"valor_1":"7.25","booleano_1":1,
		"fecha_1":"2026-02-28","texto_1":"nota","lista_datos_1":"A","alfanumerico_1":"X1"}}`)
	b.ReportAllocs()
	for b.Loop() {
		var f credit.ClientFields
		if err := json.Unmarshal(body, &f); err != nil {
			b.Fatal(err)
		}
		if err := f.Validate(true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClientStoreListSearch: one page of a search over 2000 clients (count + page query).
func BenchmarkClientStoreListSearch(b *testing.B) {
	tg := storagetest.SQLite(b)
	if _, err := storage.Migrate(b.Context(), tg.DB, credit.MigrationsTable, credit.Migrations); err != nil {
		b.Fatal(err)
	}
	s := credit.NewClientStore(tg.DB)
	for i := range 2000 {
		c := &credit.Client{CodigoEmpresa: "E", Identificacion: fmt.Sprintf("%010d", i), NombreCliente: fmt.Sprintf("Cliente %d", i), SourceSystem: "dashboard"}
		if err := s.Insert(b.Context(), c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		p, err := s.List(b.Context(), credit.ClientQuery{Search: "cliente 1", PerPage: 20})
		if err != nil || p.TotalCount != 1111 {
			b.Fatalf("%v %v", p, err)
		}
	}
}
