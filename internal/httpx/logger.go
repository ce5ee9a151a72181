package httpx

import (
	"io"
	"log/slog"

	"github.com/gofiber/fiber/v2"
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
