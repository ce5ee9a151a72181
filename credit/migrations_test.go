package credit_test

import (
	"testing"

	"github.com/platform/integrations/credit"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// TestMigrationsRoundTrip: every migration of the credit service goes up, down and up again on
// both databases.
func TestMigrationsRoundTrip(t *testing.T) {
	storagetest.MigrationsRoundTrip(t, credit.MigrationsTable, credit.Migrations)
}
