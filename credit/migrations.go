package credit

import (
	"slices"

	"github.com/platform/integrations/credit/clients"
	"github.com/platform/integrations/credit/consumption"
	"github.com/platform/integrations/credit/payments"
	"github.com/platform/integrations/internal/storage"
)

// MigrationsTable is the bookkeeping table of the credit service's migrations.
const MigrationsTable = "credit_migrations"

// Migrations is the credit service's schema, applied at start by the service. Each aggregate
// contributes its own list; names carry a timestamp prefix so the merged order is stable.
var Migrations = storage.NewMigrations(slices.Concat(clients.Migrations, consumption.Migrations, payments.Migrations)...)
