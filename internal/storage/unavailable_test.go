package storage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/platform/integrations/internal/storage"
)

// timeoutError is a net.Error that timed out (a dial or read past its deadline).
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func TestIsUnavailable(t *testing.T) {
	// A server that refuses connections: nothing listens on port 1.
	_, connectErr := pgconn.Connect(t.Context(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	if connectErr == nil {
		t.Fatal("connected to 127.0.0.1:1")
	}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"deadline", fmt.Errorf("load: %w", context.DeadlineExceeded), true},
		{"canceled", context.Canceled, true},
		{"statement_timeout", &pgconn.PgError{Code: "57014"}, true},
		{"lock_timeout", &pgconn.PgError{Code: "55P03"}, true},
		{"connection not opened", fmt.Errorf("begin: %w", connectErr), true},
		{"network timeout", fmt.Errorf("read: %w", timeoutError{}), true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"syntax error", &pgconn.PgError{Code: "42601"}, false},
		{"other", errors.New("boom"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := storage.IsUnavailable(c.err); got != c.want {
				t.Fatalf("IsUnavailable(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}
