package httpx

import (
	"context"
	"errors"
	"log/slog"
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
	return ServeListener(ctx, app, ln, DefaultShutdownGrace, nil)
}

// ServeListener is Serve on an existing listener with a chosen grace period; log (nil for none)
// gets a line when the drain starts.
func ServeListener(ctx context.Context, app *fiber.App, ln net.Listener, grace time.Duration, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()

	done := make(chan error, 1)
	go func() { done <- app.Listener(ln) }()

	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	if log != nil {
		log.Info("stopping: no new connections; in-flight requests may finish", "grace", grace)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	shutdownErr := app.ShutdownWithContext(shutdownCtx)
	// A stop that came before the server registered ln (SIGTERM during start-up) is not seen by
	// fasthttp's Shutdown; closing ln ends its Serve either way.
	_ = ln.Close()
	serveErr := <-done
	if shutdownErr != nil {
		return shutdownErr
	}
	if serveErr != nil && !errors.Is(serveErr, net.ErrClosed) {
		return serveErr
	}
	return nil
}

// LogListening logs the line that says a service is reachable, after it has bound addr: its base
// URL, API prefix, documentation page and, when token is not empty, how to mint a token.
func LogListening(log *slog.Logger, addr net.Addr, prefix, token string) {
	base := BaseURL(addr)
	attrs := []any{"url", base, "api", base + prefix, "docs", base + "/docs"}
	if token != "" {
		attrs = append(attrs, "token", token)
	}
	log.Info("listening", attrs...)
}

// BaseURL is the http:// URL of a listening address; an unspecified address (":3005") is
// reached as localhost.
func BaseURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
