package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// Migration is one schema change. Name must sort after the names before it
// (a timestamp prefix such as "20261122000100_create_clients" does this). Up and Down run inside
// one transaction each, so a failing migration leaves nothing half applied.
type Migration struct {
	Name string
	Up   func(ctx context.Context, tx bun.Tx) error
	Down func(ctx context.Context, tx bun.Tx) error
}

// NewMigrations builds a bun/migrate collection from ms.
func NewMigrations(ms ...Migration) *migrate.Migrations {
	c := migrate.NewMigrations()
	for _, m := range ms {
		c.Add(migrate.Migration{Name: m.Name, Up: inTx(m.Up), Down: inTx(m.Down)})
	}
	return c
}

func inTx(fn func(ctx context.Context, tx bun.Tx) error) func(ctx context.Context, db *bun.DB, _ any) error {
	if fn == nil {
		return nil
	}
	return func(ctx context.Context, db *bun.DB, _ any) error {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return fn(ctx, tx) })
	}
}

// Migrate applies every unapplied migration of ms, recording them in the table named table
// (its lock table is table+"_locks"). Concurrent starts of several instances wait for each
// other's lock for up to a minute instead of running the same migration twice.
func Migrate(ctx context.Context, db *bun.DB, table string, ms *migrate.Migrations) (applied []string, err error) {
	return withMigrator(ctx, db, table, ms, "migrate", (*migrate.Migrator).Migrate)
}

// Rollback undoes the last group of migrations applied by Migrate.
func Rollback(ctx context.Context, db *bun.DB, table string, ms *migrate.Migrations) (rolledBack []string, err error) {
	return withMigrator(ctx, db, table, ms, "rollback", (*migrate.Migrator).Rollback)
}

// withMigrator runs one migrator step under the advisory lock (PostgreSQL) and bun's lock table,
// and returns the names of the migrations it touched.
func withMigrator(ctx context.Context, db *bun.DB, table string, ms *migrate.Migrations, what string,
	step func(*migrate.Migrator, context.Context, ...migrate.MigrationOption) (*migrate.MigrationGroup, error),
) ([]string, error) {
	m := migrate.NewMigrator(db, ms, migrate.WithTableName(table), migrate.WithLocksTableName(table+"_locks"),
		migrate.WithMarkAppliedOnSuccess(true))
	release, err := advisoryLock(ctx, db, table)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := m.Init(ctx); err != nil {
		return nil, fmt.Errorf("storage: init migrations %s: %w", table, err)
	}
	unlock, err := lock(ctx, m)
	if err != nil {
		return nil, err
	}
	defer unlock()
	group, err := step(m, ctx)
	if err != nil {
		return nil, fmt.Errorf("storage: %s %s: %w", what, table, err)
	}
	names := make([]string, 0, len(group.Migrations))
	for _, mig := range group.Migrations {
		names = append(names, mig.Name)
	}
	return names, nil
}

// advisoryLock serialises migrations across instances on PostgreSQL, where two concurrent
// CREATE TABLE IF NOT EXISTS of the bookkeeping tables can still collide. SQLite serialises
// writers itself (_txlock=immediate), so there it is a no-op.
func advisoryLock(ctx context.Context, db *bun.DB, table string) (func(), error) {
	if !IsPostgres(db) {
		return func() {}, nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("storage: migration lock: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(hashtext(?))", table); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("storage: migration lock: %w", err)
	}
	return func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext(?))", table)
		_ = conn.Close()
	}, nil
}

func lock(ctx context.Context, m *migrate.Migrator) (func(), error) {
	deadline := time.Now().Add(time.Minute)
	for {
		err := m.Lock(ctx)
		if err == nil {
			return func() { _ = m.Unlock(context.WithoutCancel(ctx)) }, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("storage: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, errors.Join(ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// DDL runs each statement on tx after expanding the engine-specific tokens:
//
//	$ID         BIGSERIAL PRIMARY KEY           | INTEGER PRIMARY KEY AUTOINCREMENT
//	$JSON       JSONB                           | TEXT
//	$TIMESTAMP  TIMESTAMPTZ                     | TIMESTAMP
//	$DECIMAL    NUMERIC                         | NUMERIC  (precision goes after it, e.g. $DECIMAL(18,2))
func DDL(ctx context.Context, tx bun.Tx, statements ...string) error {
	pg := IsPostgres(tx)
	for _, stmt := range statements {
		if _, err := tx.ExecContext(ctx, expandDDL(stmt, pg)); err != nil {
			return fmt.Errorf("storage: %w\n%s", err, stmt)
		}
	}
	return nil
}

func expandDDL(stmt string, pg bool) string {
	var r *strings.Replacer
	if pg {
		r = strings.NewReplacer("$ID", "BIGSERIAL PRIMARY KEY", "$JSON", "JSONB", "$TIMESTAMP", "TIMESTAMPTZ", "$DECIMAL", "NUMERIC")
	} else {
		r = strings.NewReplacer("$ID", "INTEGER PRIMARY KEY AUTOINCREMENT", "$JSON", "TEXT", "$TIMESTAMP", "TIMESTAMP", "$DECIMAL", "NUMERIC")
	}
	return r.Replace(stmt)
}
