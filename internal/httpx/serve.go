package httpx

import (
	"context"
	"errors"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
)

// DefaultShutdownGrace is how long Serve lets in-flight requests finish after a stop signal. It is
// above the 30 s upstream timeouts, so a request waiting on an upstream still gets its answer.
const DefaultShutdownGrace = 35 * time.Second

// Serve listens on addr and serves app until ctx is cancelled or the process receives SIGTERM or
// SIGINT; it then stops accepting connections and waits up to DefaultShutdownGrace for in-flight
// requests to finish. It returns nil after a clean stop.
func Serve(ctx context.Context, app *fiber.App, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return ServeListener(ctx, app, ln, DefaultShutdownGrace)
}

// ServeListener is Serve on an existing listener with a chosen grace period.
func ServeListener(ctx context.Context, app *fiber.App, ln net.Listener, grace time.Duration) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()

	done := make(chan error, 1)
	go func() { done <- app.Listener(ln) }()

	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	shutdownErr := app.ShutdownWithContext(shutdownCtx)
	serveErr := <-done
	if shutdownErr != nil {
		return shutdownErr
	}
	if serveErr != nil && !errors.Is(serveErr, net.ErrClosed) {
		return serveErr
	}
	return nil
}
