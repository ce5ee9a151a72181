package topup

import (
	"testing"
	"time"

	"github.com/platform/integrations/internal/storage/storagetest"
)

// The dashboard's list and the reconciler backlog of /metrics read beside the writes on SQLite
// (storage.Reader): they answer while the one writer connection is held.
func TestListAndBacklogReadBesideTheWriter(t *testing.T) {
	tg := storagetest.SQLite(t)
	if _, err := Migrate(t.Context(), tg.DB); err != nil {
		t.Fatal(err)
	}
	store := NewStore(tg.DB, nil)
	ctx := storagetest.HoldWriter(t, tg.DB)
	if _, _, err := store.List(ctx, Filter{Source: SourceWorkflowWebhook}); err != nil {
		t.Errorf("List: %v", err)
	}
	if _, err := store.backlog(ctx, time.Now()); err != nil {
		t.Errorf("backlog: %v", err)
	}
}
