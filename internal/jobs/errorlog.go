package jobs

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// errorLogger raises River's job failures to Warn, and the last one to Error: River logs them
// at Info, below a production LOG_LEVEL, and a notification that is never sent must be seen.
// Job args are not logged: they may carry personal data.
type errorLogger struct{ log *slog.Logger }

func (h errorLogger) HandleError(ctx context.Context, job *rivertype.JobRow, err error) *river.ErrorHandlerResult {
	h.report(ctx, job, err.Error())
	return nil
}

func (h errorLogger) HandlePanic(ctx context.Context, job *rivertype.JobRow, panicVal any, _ string) *river.ErrorHandlerResult {
	h.report(ctx, job, fmt.Sprintf("panic: %v", panicVal))
	return nil
}

func (h errorLogger) report(ctx context.Context, job *rivertype.JobRow, msg string) {
	attrs := []any{
		slog.Int64("job_id", job.ID),
		slog.String("job_kind", job.Kind),
		slog.String("queue", job.Queue),
		slog.Int("attempt", job.Attempt),
		slog.Int("max_attempts", job.MaxAttempts),
		slog.String("error", msg),
	}
	if job.Attempt >= job.MaxAttempts {
		h.log.ErrorContext(ctx, "job discarded after its last attempt", attrs...)
		return
	}
	h.log.WarnContext(ctx, "job failed; will retry", attrs...)
}
