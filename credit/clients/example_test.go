package clients_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/platform/integrations/credit"
	"github.com/platform/integrations/credit/clients"
	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/internal/storage"
)

// The creditsystem's entry point: a new client is stored unsynced, a repeat is EXISTS_LOCAL,
// and a client the ERP already has is EXISTS_IN_ERP. The manual sync then creates it in the ERP.
func ExampleService_CreateFromCreditSystem() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "clients-example")
	defer os.RemoveAll(dir)
	db, err := storage.Open(ctx, filepath.Join(dir, "credit.db"))
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if _, err := storage.Migrate(ctx, db, credit.MigrationsTable, credit.Migrations); err != nil {
		panic(err)
	}
	fake := erptest.NewServer()
	defer fake.Close()
	erpClient, _ := erp.New(fake.Config(2 * time.Second))
	svc, _ := clients.NewService(clients.NewStore(db), erpClient)

	in := clients.Fields{
		CodigoEmpresa:  clients.FieldValue("000598"),
		NombreCliente:  clients.FieldValue("Ana Pérez"),
		Identificacion: clients.FieldValue("0102030405"),
	}
	c, pre, err := svc.CreateFromCreditSystem(ctx, in)
	fmt.Println(err, c.SourceSystem, c.ERPSynced, c.CodigoCliente == nil, pre.Found)

	_, _, err = svc.CreateFromCreditSystem(ctx, in)
	var exists *clients.ExistsError
	fmt.Println(errors.As(err, &exists), exists.Reason)

	in.Identificacion = clients.FieldValue(erptest.IdentificacionExisting)
	_, _, err = svc.CreateFromCreditSystem(ctx, in)
	fmt.Println(errors.As(err, &exists), exists.Reason, exists.ERPClient.CodigoCliente)

	res, err := svc.SyncERP(ctx, fmt.Sprint(c.ID))
	fmt.Println(err, res.Operation, *res.Client.CodigoCliente, res.Client.ERPSynced)
	// Output:
	// <nil> CREDITSYSTEM false true false
	// true EXISTS_LOCAL
	// true EXISTS_IN_ERP C-0999999999
	// <nil> create C-0102030405 true
}
