package clients_test

import (
	"testing"

	"github.com/platform/integrations/credit/clients"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// The client list and search read beside the writes on SQLite (storage.Reader): they answer while
// the one writer connection is held.
func TestListReadsBesideTheWriter(t *testing.T) {
	tg := storagetest.SQLite(t)
	s := migratedStore(t, tg)
	ctx := storagetest.HoldWriter(t, tg.DB)
	if _, err := s.List(ctx, clients.Query{Search: "perez"}); err != nil {
		t.Errorf("List: %v", err)
	}
}
