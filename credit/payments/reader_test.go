package payments

import (
	"testing"
	"time"

	"github.com/platform/integrations/internal/storage/storagetest"
)

// The payment list and the counts of /metrics read beside the writes on SQLite
// (storage.Reader): they answer while the one writer connection is held.
func TestListAndPendientesReadBesideTheWriter(t *testing.T) {
	tg := storagetest.SQLite(t)
	e := newEnv(t, tg, 2*time.Second)
	ctx := storagetest.HoldWriter(t, tg.DB)
	if _, _, err := e.store.List(ctx, ListQuery{Page: 1, PerPage: 20}); err != nil {
		t.Errorf("List: %v", err)
	}
	if _, _, err := e.store.Pendientes(ctx, time.Now()); err != nil {
		t.Errorf("Pendientes: %v", err)
	}
}
