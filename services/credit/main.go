// Command credit is the credit service: the client registry, the direct-credit consumption
// module and (next) payments, on port 3005 under /api/v1/credigestion.
//
//	credit                                              migrate the database, then serve until SIGTERM
//	credit migrate                                      migrate the database and exit
//	credit reconcile <autorizacion_id> applied|not-applied
//
// reconcile is the operator's tool for an authorization held after an upstream timeout
// (every call on it answers 409 until then): after asking the creditsystem whether the timed-out
// operation was applied, the operator records the answer. "applied" moves the record to the
// operation's target state (CONSUMIDO, REVERSADO, CONSUMO_REVERSADO); "not-applied" releases it
// in its previous state so the caller may repeat the call. Both are audited in
// consumo_intentos. It makes no upstream call.
//
// Configuration comes from the environment (see the README). In development mode (APP_ENV
// unset or "development") every upstream whose URL is not configured runs against its
// in-process fake (creditsystemtest, erptest), and the log says so at start.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/credit"
	"github.com/platform/integrations/internal/config"
	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/storage"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "credit:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage: credit [migrate | reconcile <autorizacion_id> applied|not-applied]")

// reconcile records the operator's answer for an authorization held after a timeout. It needs
// no creditsystem connection: the operator already asked the creditsystem.
func reconcile(ctx context.Context, db *bun.DB, autorizacionID, outcome string, out io.Writer) error {
	var applied bool
	switch outcome {
	case "applied":
		applied = true
	case "not-applied":
	default:
		return errUsage
	}
	consumos, err := credit.NewConsumos(db, noUpstream{})
	if err != nil {
		return err
	}
	c, err := consumos.Reconciliar(ctx, autorizacionID, applied)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "authorization %s reconciled (%s): estado %s\n", c.AutorizacionID, outcome, c.Estado)
	return err
}

// noUpstream is the creditsystem of the reconcile command, which never calls it.
type noUpstream struct{ credit.Creditsystem }

func run(ctx context.Context, args []string) error {
	cfg, err := config.LoadCredit()
	if err != nil {
		return err
	}
	log := httpx.NewLogger(os.Stdout, cfg.Production(), cfg.LogLevel).With("service", "credit")
	migrateOnly, reconcileArgs := false, []string(nil)
	switch {
	case len(args) == 0:
	case len(args) == 1 && (args[0] == "migrate" || args[0] == "-migrate" || args[0] == "--migrate"):
		migrateOnly = true
	case len(args) == 3 && args[0] == "reconcile":
		reconcileArgs = args[1:]
	default:
		return errUsage
	}

	db, err := storage.Open(ctx, cfg.DatabaseURL.Reveal())
	if err != nil {
		return err
	}
	defer db.Close()
	applied, err := storage.Migrate(ctx, db, credit.MigrationsTable, credit.Migrations)
	if err != nil {
		return err
	}
	log.Info("database migrated", "engine", db.Dialect().Name().String(), "applied", applied)
	if migrateOnly {
		return nil
	}
	if reconcileArgs != nil {
		return reconcile(ctx, db, reconcileArgs[0], reconcileArgs[1], os.Stdout)
	}

	srv, err := newServer(ctx, cfg, db, log)
	if err != nil {
		return err
	}
	defer srv.Close()
	log.Info("credit service listening", "addr", cfg.Addr(), "env", cfg.AppEnv, "config", cfg)
	err = httpx.Serve(ctx, srv.app, cfg.Addr())
	log.Info("credit service stopped")
	return err
}
