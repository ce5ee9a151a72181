package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/riverqueue/river/rivermigrate"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
)

// Migrate creates or upgrades River's tables (river_job, river_queue, river_leader,
// river_migration, ...) in db with River's own migrator for the engine, in the schema that
// db's search_path selects on PostgreSQL, where it then drops River's two GIN indexes on
// river_job ("Insert cost" in the package doc), and then creates the indexes that opts ask for.
// It is idempotent, and two processes starting at once wait for each other instead of applying
// the same version twice.
func Migrate(ctx context.Context, db *bun.DB, opts ...MigrateOption) error {
	var indexes []string
	for _, o := range opts {
		if !argMember.MatchString(o.member) {
			return fmt.Errorf("jobs: migrate: arg index: member %q is not a plain name", o.member)
		}
		indexes = append(indexes, o.member)
	}
	cfg := &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)}
	m, err := rivermigrate.New(driver(db), cfg)
	if err != nil {
		return fmt.Errorf("jobs: migrate: %w", err)
	}
	if !storage.IsPostgres(db) {
		// One BEGIN IMMEDIATE transaction for the whole run: a second process blocks on it
		// (busy_timeout), then finds every version already recorded. SQLite DDL is
		// transactional, so a failure leaves nothing half applied.
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			//lint:ignore SA1019 deprecated because some PostgreSQL versions need a transaction of their own; SQLite has none.
			if _, err := m.MigrateTx(ctx, tx.Tx, rivermigrate.DirectionUp, nil); err != nil {
				return fmt.Errorf("jobs: migrate: %w", err)
			}
			return createArgIndexes(ctx, tx, false, indexes)
		})
	}
	// River's migrator reads the applied versions before its per-version transactions, so two
	// instances could both try version 1. A session advisory lock, keyed by the schema so that
	// parallel test schemas do not wait for each other, serialises them.
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("jobs: migrate lock: %w", err)
	}
	defer conn.Close()
	// The wait for another instance's run may take longer than a request's statement_timeout.
	if _, err := conn.ExecContext(ctx, "SET statement_timeout = 0; SET lock_timeout = 0"); err != nil {
		return fmt.Errorf("jobs: migrate lock: %w", err)
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "RESET statement_timeout; RESET lock_timeout")
	}()
	const key = "hashtext('river_migrate.' || current_schema())"
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock("+key+")"); err != nil {
		return fmt.Errorf("jobs: migrate lock: %w", err)
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock("+key+")")
	}()
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("jobs: migrate: %w", err)
	}
	// Indexes that nothing here reads ("Insert cost" in the package doc).
	if _, err := conn.ExecContext(ctx, "DROP INDEX IF EXISTS "+strings.Join(unusedIndexes, ", ")); err != nil {
		return fmt.Errorf("jobs: migrate: drop unused indexes: %w", err)
	}
	return createArgIndexes(ctx, conn, true, indexes)
}

// MigrateOption adds an index to what Migrate creates.
type MigrateOption struct{ member string }

// WithArgIndex makes Migrate index river_job by the top-level string member of the jobs' args
// named member (letters, digits and '_'), the index that JobsWithArg(ctx, queue, member, value)
// reads instead of every job River holds. Each job insert then writes one more index entry.
func WithArgIndex(member string) MigrateOption { return MigrateOption{member: member} }

// createArgIndexes creates the index of each member on the expression that argExpr writes:
// PostgreSQL and SQLite use an index on an expression only for a query that repeats it exactly.
// On PostgreSQL an index already there is not created again: CREATE INDEX IF NOT EXISTS would
// first lock river_job against inserts, at every start.
func createArgIndexes(ctx context.Context, db bun.IConn, postgres bool, members []string) error {
	for _, member := range members {
		name, expr := "river_job_arg_"+member+"_idx", argExpr(postgres, member)
		if postgres {
			var exists bool
			if err := db.QueryRowContext(ctx, "SELECT to_regclass(?) IS NOT NULL", name).Scan(&exists); err != nil {
				return fmt.Errorf("jobs: migrate: arg index: %w", err)
			}
			if exists {
				continue
			}
			expr = "(" + expr + ")"
		}
		if _, err := db.ExecContext(ctx, "CREATE INDEX IF NOT EXISTS "+name+" ON river_job ("+expr+")"); err != nil {
			return fmt.Errorf("jobs: migrate: arg index: %w", err)
		}
	}
	return nil
}

// unusedIndexes are the indexes River's PostgreSQL migrations create on river_job that Migrate
// drops.
var unusedIndexes = []string{"river_job_args_index", "river_job_metadata_index"}
