package httpx

import (
	"io"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/upstream"
)

// NewLogger returns the services' logger: JSON lines in production (for the log pipeline), text in
// development (for people).
func NewLogger(w io.Writer, production bool, level slog.Leveler) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if production {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Logger returns l with the request id of c, for handlers that log.
func Logger(c *fiber.Ctx, l *slog.Logger) *slog.Logger {
	return l.With(slog.String("request_id", RequestID(c)))
}

// requestLevel is the level of a request's log line: ERROR for a 5xx, except WARN for an upstream
// business rejection (lError, STATUS=ERROR, error_api: the upstream worked and said no, which
// the service answers 502 but nobody has to repair; a fault or an unreachable upstream stays
// ERROR); DEBUG for /up and /metrics; INFO otherwise.
func requestLevel(route string, status int, err error) slog.Level {
	switch {
	case status >= 500 && upstream.KindOf(err) == upstream.Rejected:
		return slog.LevelWarn
	case status >= 500:
		return slog.LevelError
	case route == "/up" || route == "/metrics":
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
