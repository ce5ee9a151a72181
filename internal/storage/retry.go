package storage

import (
	"context"
	"time"
)

// retryWaits are the pauses between the attempts of RetryWrite: a write that records what an
// upstream already did is worth a second and a half of trying, not more (the caller is waiting).
var retryWaits = []time.Duration{100 * time.Millisecond, 400 * time.Millisecond, time.Second}

// RetryWrite runs write until it succeeds or has failed 1+len(retryWaits) times, pausing between
// attempts, and returns its last error. It is for the writes that record an upstream's outcome:
// the outcome must not be lost to a passing fault (a lock timeout, a dropped connection, a
// backend terminated). A unique violation is not retried: it would only fail again. ctx bounds
// the pauses.
func RetryWrite(ctx context.Context, write func(context.Context) error) error {
	err := write(ctx)
	for _, wait := range retryWaits {
		if err == nil || IsUniqueViolation(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		err = write(ctx)
	}
	return err
}
