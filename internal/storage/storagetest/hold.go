package storagetest

import (
	"context"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
)

// HoldWriter keeps a transaction open on db until release is called or the test ends. On SQLite
// that holds the one writer connection, so a read that answers meanwhile went through
// storage.Reader. Call release before anything that must write.
func HoldWriter(t testing.TB, db *bun.DB) (release func()) {
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
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(free)
			if err := <-done; err != nil {
				t.Errorf("hold the writer: %v", err)
			}
		})
	}
	t.Cleanup(release)
	return release
}
