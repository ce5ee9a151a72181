package credit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/platform/integrations/credit"
	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/internal/storage"
)

// The creditsystem's entry point: a new client is stored unsynced, a repeat is EXISTS_LOCAL,
// and a client the ERP already has is EXISTS_IN_ERP. The manual sync then creates it in the ERP.
func ExampleClients_CreateFromCreditSystem() {
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
	clients, _ := credit.NewClients(credit.NewClientStore(db), erpClient)

	var in credit.ClientFields
	_ = json.Unmarshal([]byte(`{"codigo_empresa":"000598","nombre_cliente":"Ana Pérez","identificacion":"0102030405"}`), &in)
	c, pre, err := clients.CreateFromCreditSystem(ctx, in)
	fmt.Println(err, c.SourceSystem, c.ERPSynced, c.CodigoCliente == nil, pre.Found)

	_, _, err = clients.CreateFromCreditSystem(ctx, in)
	var exists *credit.ClientExistsError
	fmt.Println(errors.As(err, &exists), exists.Reason)

	_ = json.Unmarshal([]byte(`{"identificacion":"`+erptest.IdentificacionExisting+`"}`), &in)
	_, _, err = clients.CreateFromCreditSystem(ctx, in)
	fmt.Println(errors.As(err, &exists), exists.Reason, exists.ERPClient.CodigoCliente)

	res, err := clients.SyncERP(ctx, fmt.Sprint(c.ID))
	fmt.Println(err, res.Operation, *res.Client.CodigoCliente, res.Client.ERPSynced)
	// Output:
	// <nil> CREDITSYSTEM false true false
	// true EXISTS_LOCAL
	// true EXISTS_IN_ERP C-0999999999
	// <nil> create C-0102030405 true
}
