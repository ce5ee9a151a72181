package storagetest

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
)

// HoldWriter keeps a transaction open on db until the test ends. On SQLite that holds the one
// writer connection, so a read that answers meanwhile went through storage.Reader. It returns a
// context for such reads, which expires after two seconds.
func HoldWriter(t testing.TB, db *bun.DB) context.Context {
	t.Helper()
	inTx, done := make(chan struct{}), make(chan error, 1)
	free := make(chan struct{})
	go func() {
		done <- storage.RunInTx(context.Background(), db, func(context.Context, bun.Tx) error {
			close(inTx)
			<-free
			return nil
		})
	}()
	select {
	case <-inTx:
	case err := <-done:
		t.Fatalf("hold the writer: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	t.Cleanup(func() {
		cancel()
		close(free)
		if err := <-done; err != nil {
			t.Errorf("hold the writer: %v", err)
		}
	})
	return ctx
}
