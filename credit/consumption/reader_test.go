package consumption

import (
	"context"
	"testing"
	"time"

	"github.com/platform/integrations/internal/storage/storagetest"
)

// The counts of /metrics read beside the writes on SQLite (storage.Reader): they answer while
// the one writer connection is held.
func TestUnknownReadsBesideTheWriter(t *testing.T) {
	tg := storagetest.SQLite(t)
	s := migrated(t, tg)
	storagetest.HoldWriter(t, tg.DB)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if _, _, err := s.Unknown(ctx, time.Now()); err != nil {
		t.Errorf("Unknown: %v", err)
	}
}
