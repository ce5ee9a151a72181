package consumption

import (
	"testing"
	"time"

	"github.com/platform/integrations/internal/storage/storagetest"
)

// The counts of /metrics read beside the writes on SQLite (storage.Reader): they answer while
// the one writer connection is held.
func TestUnknownReadsBesideTheWriter(t *testing.T) {
	tg := storagetest.SQLite(t)
	s := migrated(t, tg)
	ctx := storagetest.HoldWriter(t, tg.DB)
	if _, _, err := s.Unknown(ctx, time.Now()); err != nil {
		t.Errorf("Unknown: %v", err)
	}
}
