package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/config"
	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/idempotency"
	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/topup"
)

func main() {
	httpx.TuneGC(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		report(os.Stderr, err)
		os.Exit(1)
	}
}

// report prints a failed command's error once, prefixed with the command's name; the usage
// already names it.
func report(w io.Writer, err error) {
	if errors.Is(err, errUsage) {
		fmt.Fprintln(w, err)
		return
	}
	fmt.Fprintln(w, serviceName+":", err)
}

var errUsage = errors.New("usage: topup [migrate | worker]")

// run loads the configuration, opens and migrates the database (every command), and then,
// unless the command is migrate, serves until ctx ends or SIGTERM/SIGINT.
func run(ctx context.Context, args []string) error {
	cfg, err := config.LoadTopup()
	if err != nil {
		return err
	}
	log := httpx.NewLogger(os.Stdout, cfg.Production(), cfg.LogLevel).With("service", serviceName)
	slog.SetDefault(log)
	migrateOnly, workerOnly := false, false
	switch {
	case len(args) == 0:
	case len(args) == 1 && (args[0] == "migrate" || args[0] == "-migrate" || args[0] == "--migrate"):
		migrateOnly = true
	case len(args) == 1 && args[0] == "worker":
		workerOnly = true
	default:
		return errUsage
	}

	db, err := storage.Open(ctx, cfg.DatabaseURL.Reveal(), storage.WithStatementTimeout(cfg.RequestTimeout), storage.WithMaxConns(cfg.DatabaseMaxConns))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := migrate(ctx, db); err != nil {
		return err
	}
	log.Info("database migrated", "engine", db.Dialect().Name().String(), "database", storage.Redact(cfg.DatabaseURL.Reveal()))
	if migrateOnly {
		return nil
	}
	if workerOnly {
		return work(ctx, cfg, db, log)
	}

	health, err := storage.OpenHealth(ctx, cfg.DatabaseURL.Reveal())
	if err != nil {
		return err
	}
	defer health.Close()
	s, err := newServer(ctx, cfg, deps{DB: db, Health: health, Logger: log})
	if err != nil {
		return err
	}
	defer s.close()
	ln, err := net.Listen("tcp", cfg.Addr())
	if err != nil {
		return err
	}
	s.logStart(ln.Addr())
	err = s.serve(ctx, ln)
	log.Info("stopped")
	return err
}

// work is `topup worker`: it sends the notification e-mails of the queue until SIGTERM/SIGINT,
// without HTTP, beside (or instead of) the workers of the service processes.
func work(ctx context.Context, cfg *config.Topup, db *bun.DB, log *slog.Logger) error {
	sender, err := newSender(cfg, db, DefaultOutboxDir, prometheus.NewRegistry(), log)
	if err != nil {
		return err
	}
	queue, err := notificationQueue(db, sender, log)
	if err != nil {
		return err
	}
	log.Info("top-up notification worker started", "queue", topup.NotificationQueue, "workers", notificationWorkers,
		"smtp_host", cfg.SMTP.Host)
	err = queue.Run(ctx, httpx.DefaultShutdownGrace)
	log.Info("top-up notification worker stopped")
	return err
}

// migrate applies the top-up schema and River's tables, with River's jobs indexed by the
// transaction of their notification (topup.JobIndex).
func migrate(ctx context.Context, db *bun.DB) error {
	if _, err := topup.Migrate(ctx, db); err != nil {
		return err
	}
	if err := jobs.Migrate(ctx, db, topup.JobIndex); err != nil {
		return err
	}
	return idempotency.Migrate(ctx, db, idempotencyTable)
}

// idempotencyTable keeps the Idempotency-Key answers of POST /recharge.
const idempotencyTable = "topup_idempotency_keys"
