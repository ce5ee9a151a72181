package clients_test

import (
	"fmt"
	"testing"

	"github.com/platform/integrations/credit"
	"github.com/platform/integrations/credit/clients"
	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// BenchmarkClientStoreListSearch: one page of a search over 2000 clients (count + page query).
func BenchmarkClientStoreListSearch(b *testing.B) {
	tg := storagetest.SQLite(b)
	if _, err := storage.Migrate(b.Context(), tg.DB, credit.MigrationsTable, credit.Migrations); err != nil {
		b.Fatal(err)
	}
	s := clients.NewStore(tg.DB)
	for i := range 2000 {
		c := &clients.Client{CodigoEmpresa: "E", Identificacion: fmt.Sprintf("%010d", i), NombreCliente: fmt.Sprintf("Cliente %d", i), SourceSystem: "dashboard"}
		if err := s.Insert(b.Context(), c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		p, err := s.List(b.Context(), clients.Query{Search: "cliente 1", PerPage: 20})
		if err != nil || p.TotalCount != 1111 {
			b.Fatalf("%v %v", p, err)
		}
	}
}
