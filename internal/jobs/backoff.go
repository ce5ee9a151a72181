package jobs

import (
	"math"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// ExponentialBackoff is a retry policy that waits Initial after the first failure and doubles
// the wait after each further one, never waiting more than Max (no cap when Max is zero).
// It has no jitter: jobs here are few, and a predictable schedule is easier to explain to
// operations than River's default.
type ExponentialBackoff struct {
	Initial time.Duration
	Max     time.Duration
}

// NextRetry implements river.ClientRetryPolicy. River records the failed attempt's error
// after asking, so len(job.Errors) is the number of earlier failures.
func (b ExponentialBackoff) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().UTC().Add(b.Delay(len(job.Errors) + 1))
}

// Delay is the wait after the failure-th consecutive failure (1-based).
func (b ExponentialBackoff) Delay(failure int) time.Duration {
	d := max(b.Initial, time.Millisecond)
	for i := 1; i < failure && (b.Max == 0 || d < b.Max); i++ {
		if d > math.MaxInt64/2 {
			return math.MaxInt64
		}
		d *= 2
	}
	if b.Max > 0 && d > b.Max {
		d = b.Max
	}
	return d
}
