// Command credit is the credit service (specification credit-service.md): the client registry
// and the direct-credit consumption module, on port 3005 (PORT) under /api/v1/credigestion.
//
//	credit                                              migrate the database, then serve until SIGTERM
//	credit migrate                                      migrate the database and exit
//	credit reconcile <autorizacion_id> applied|not-applied
//	credit settle <attempt_id> [note]
//	credit handover <hand-over id> resend | done <document>
//
// reconcile is the operator's tool for an authorization held after an upstream timeout
// (every call on it answers 409 until then): after asking the creditsystem whether the timed-out
// operation was applied, the operator records the answer. "applied" moves the record to the
// operation's target state (CONSUMIDO, REVERSADO, CONSUMO_REVERSADO); "not-applied" releases it
// in its previous state so the caller may repeat the call. Both are audited in
// consumo_intentos. It makes no upstream call.
//
// settle is the operator's tool for an authorization attempt that needed a person (README, "When
// something fails"): an authorization whose outcome is unknown, or a granted one the service
// could neither record nor reverse. Once the creditsystem is right (the authorization reversed
// there if it was granted), settle marks the attempt settled, with the note, so it leaves
// credit_authorizations_unrecorded.
//
// handover finishes a payment's ERP hand-over that was given up (credit_payment_handovers_failing):
// resend enqueues it again (the running service's worker sends it); done records the document
// a person issued in the ERP by hand (the only way for a payment found applied by a debt query,
// whose operation number the creditsystem never gave).
//
// Configuration comes from the environment (see the README). In development mode (APP_ENV
// unset or "development") every upstream whose URL is not configured runs against its
// in-process fake (creditsystemtest, erptest), and the log says so at start.
//
// # HTTP decisions
//
// Rules of every field are the domain's (packages credit/clients and credit/consumption); what
// the HTTP shell decides where the specification is silent:
//
//   - Clients: :codigo is the client's codigo_cliente; a client the ERP has not yet given one
//     is addressed by its id, which every answer carries (a codigo_cliente equal to another
//     client's id wins). GET /clients/:codigo of an unknown codigo is 404. per_page is clamped to
//     1..100, page below 1 means 1, a page past the last one answers no clients; a page or
//     per_page that is not an integer is a 400. The list is newest first.
//   - POST /clients/:codigo/sync-erp takes no body and answers 200 {"success": true,
//     "operation": "create"|"update", "operacion": 0|1, "client": {...}}. An ERP rejection is 502
//     with the upstream message object (operation "create" or "update") and records nothing; no
//     answer within ERP_TIMEOUT is 504 and records nothing (the ERP may have applied it: POST
//     /clients/exists tells before retrying by hand). A second sync of the same client while one
//     is in flight is 409.
//   - from-creditsystem answers 409 EXISTS_IN_ERP even when the client also exists locally (the
//     ERP is the source of truth); a repeat that races the first create answers EXISTS_LOCAL.
//   - Limits are sent as numeric strings (or JSON numbers) in plain decimal notation, "" meaning
//     no limit; an unreadable member is reported with the record's other problems.
//   - Consumption: every endpoint answers 200 on success. Money is a JSON number with two
//     decimals; dates are "yyyy-mm-dd"; an upstream member that is nil, empty or absent (a list
//     included) is null (translation rule 5). Monetary inputs are numeric strings.
//   - cupo answers the flat fields the specification lists, taken from the first credit line
//     the creditsystem lists and that line's first operation type (each null when there is
//     none), and beside them cupos: [{cCodigoTipoCupo, ..., operaciones: [{...}]}] with every
//     credit line and operation type.
//   - An optional field of financiacion (codigo_tipo_operacion) or of an item (codigo_articulo,
//     codigo_tipo_articulo, caracteristicas) that is absent, empty or blank is left out of the
//     SOAP request. financiacion wraps its options in "alternativas"; cuota_garantia_extendida
//     and cuota_entrada_minima are always present, null on the options without them.
//   - autorizacion also answers estado and imagen_qr, and accepts an optional otp (max 10):
//     when empty the configured CREDITSYSTEM_OTP_BYPASS is sent as cCodigoOtp (rule 2). That
//     otp is not the one /otp registers and is not stored. confirmar answers tabla_amortizacion
//     and cupos_afectados as arrays of objects, plus estado.
//   - A request on an authorization another request holds is 409; so is every request on an
//     authorization whose last money-moving call timed out, until an operator reconciles it. A
//     state that does not allow the operation is 400, naming the authorization and its state.
//   - A body holding \u0000 is a 400 and a compressed body (Content-Encoding) a 415 (httpx).
//
// errors.go's mapError is the one function from errors to statuses and bodies.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/credit"
	"github.com/platform/integrations/credit/consumption"
	"github.com/platform/integrations/credit/payments"
	"github.com/platform/integrations/internal/config"
	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/idempotency"
	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/storage"
)

func main() {
	httpx.TuneGC(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
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

var errUsage = errors.New("usage: credit [migrate | reconcile <autorizacion_id> applied|not-applied | settle <attempt_id> [note] | handover <id> resend|done <document>]")

// idempotencyTable keeps the Idempotency-Key answers of the money-moving routes.
const idempotencyTable = "credit_idempotency_keys"

// migrate applies the credit service's schema, its idempotency keys' table and the job
// queue's tables (the payments hand-over).
func migrate(ctx context.Context, db *bun.DB) error {
	if _, err := storage.Migrate(ctx, db, credit.MigrationsTable, credit.Migrations); err != nil {
		return err
	}
	if err := idempotency.Migrate(ctx, db, idempotencyTable); err != nil {
		return err
	}
	return jobs.Migrate(ctx, db)
}

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
	svc, err := consumption.NewService(consumption.NewStore(db), noUpstream{})
	if err != nil {
		return err
	}
	c, err := svc.Reconciliar(ctx, autorizacionID, applied)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "authorization %s reconciled (%s): estado %s\n", c.AutorizacionID, outcome, c.Estado)
	return err
}

// settle records that an operator settled an authorization attempt by hand.
func settle(ctx context.Context, db *bun.DB, cfg *config.Credit, attempt, note string, out io.Writer) error {
	id, err := strconv.ParseInt(attempt, 10, 64)
	if err != nil || id <= 0 {
		return errUsage
	}
	svc, err := consumption.NewService(consumption.NewStore(db), noUpstream{}, consumption.WithCallTimeout(cfg.Creditsystem.Timeout))
	if err != nil {
		return err
	}
	in, err := svc.Atender(ctx, id, note)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "attempt %d (%s %s) settled\n", in.ID, in.Operacion, cmp.Or(in.AutorizacionID, "without autorizacion_id"))
	return err
}

// handover resends a given-up ERP hand-over of a payment, or closes it with the document issued
// by hand.
func handover(ctx context.Context, db *bun.DB, args []string, out io.Writer) error {
	id, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || id <= 0 {
		return errUsage
	}
	queue, err := jobs.New(db, nil, jobs.Config{})
	if err != nil {
		return err
	}
	svc, err := payments.NewService(payments.NewStore(db, queue), noPaymentsUpstream{})
	if err != nil {
		return err
	}
	var e *payments.Entrega
	switch {
	case len(args) == 2 && args[1] == "resend":
		e, err = svc.Reenviar(ctx, id)
	case len(args) == 3 && args[1] == "done":
		e, err = svc.Cerrar(ctx, id, args[2])
	default:
		return errUsage
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "hand-over %d (%s of payment %d): %s\n", e.ID, e.Evento, e.PagoID, e.Estado)
	return err
}

// noPaymentsUpstream is the creditsystem of the handover command, which never calls it.
type noPaymentsUpstream struct{ payments.Creditsystem }

// noUpstream is the creditsystem of the reconcile command, which never calls it.
type noUpstream struct{ consumption.Creditsystem }

func run(ctx context.Context, args []string) error {
	cfg, err := config.LoadCredit()
	if err != nil {
		return err
	}
	log := httpx.NewLogger(os.Stdout, cfg.Production(), cfg.LogLevel).With("service", serviceName)
	migrateOnly, reconcileArgs, settleArgs, handoverArgs := false, []string(nil), []string(nil), []string(nil)
	switch {
	case len(args) == 0:
	case len(args) == 1 && (args[0] == "migrate" || args[0] == "-migrate" || args[0] == "--migrate"):
		migrateOnly = true
	case len(args) == 3 && args[0] == "reconcile":
		reconcileArgs = args[1:]
	case (len(args) == 2 || len(args) == 3) && args[0] == "settle":
		settleArgs = append(args[1:], "")
	case (len(args) == 3 || len(args) == 4) && args[0] == "handover":
		handoverArgs = args[1:]
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
	if reconcileArgs != nil {
		return reconcile(ctx, db, reconcileArgs[0], reconcileArgs[1], os.Stdout)
	}
	if settleArgs != nil {
		return settle(ctx, db, cfg, settleArgs[0], settleArgs[1], os.Stdout)
	}
	if handoverArgs != nil {
		return handover(ctx, db, handoverArgs, os.Stdout)
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
