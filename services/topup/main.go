package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/platform/integrations/internal/config"
	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/storage"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "topup:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	cfg, err := config.LoadTopup()
	if err != nil {
		return err
	}
	log := httpx.NewLogger(os.Stdout, cfg.Production(), cfg.LogLevel).With("service", "topup")
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	switch {
	case len(args) == 0:
	case len(args) == 1 && (args[0] == "migrate" || args[0] == "-migrate" || args[0] == "--migrate"):
		db, err := storage.Open(ctx, cfg.DatabaseURL.Reveal())
		if err != nil {
			return err
		}
		defer db.Close()
		if err := migrate(ctx, db); err != nil {
			return err
		}
		log.Info("migrations applied", "database", storage.Redact(cfg.DatabaseURL.Reveal()))
		return nil
	default:
		return errors.New("usage: topup [migrate]")
	}

	st, err := loadSettings(cfg.Recargas)
	if err != nil {
		return err
	}
	s, err := newServer(ctx, options{Config: cfg, Settings: st, Logger: log})
	if err != nil {
		return err
	}
	defer s.close()
	ln, err := net.Listen("tcp", cfg.Addr())
	if err != nil {
		return err
	}
	s.logStart(ln.Addr().String())
	err = s.serve(ctx, ln, httpx.DefaultShutdownGrace)
	log.Info("top-up service stopped")
	return err
}
