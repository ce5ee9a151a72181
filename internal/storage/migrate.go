package storage

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Migration is one schema change. Name must sort after the names before it (a timestamp prefix
// such as "20261122000100_create_clients" does this).
type Migration struct {
	Name string
	Up   func(ctx context.Context, tx bun.Tx) error
	Down func(ctx context.Context, tx bun.Tx) error
}

// Migrations is a service's schema: its migrations in name order.
type Migrations struct {
	list []Migration
}

// NewMigrations builds a collection from ms, sorted by name.
func NewMigrations(ms ...Migration) *Migrations {
	list := slices.Clone(ms)
	slices.SortFunc(list, func(a, b Migration) int { return strings.Compare(a.Name, b.Name) })
	return &Migrations{list: list}
}

// Names lists the migrations' names in order.
func (ms *Migrations) Names() []string {
	out := make([]string, len(ms.list))
	for i, m := range ms.list {
		out[i] = m.Name
	}
	return out
}

// Migrate applies every unapplied migration of ms, recording them in the table named table (the
// format of bun/migrate's table: id, name, group_id, migrated_at), and returns their names.
//
// A start whose schema is current reads the table and returns without taking any lock. Otherwise
// the run holds a lock that dies with its process, so a process killed mid-migration never
// blocks the next start: on PostgreSQL a session advisory lock (released when the connection
// closes), on SQLite the write transaction of the run itself (rolled back by SQLite's recovery).
// All pending migrations apply in one transaction: a failure, or a kill, leaves none of them.
// Concurrent starts of several instances wait for each other's lock.
func Migrate(ctx context.Context, db *bun.DB, table string, ms *Migrations) (applied []string, err error) {
	if done, err := appliedNames(ctx, db, table); err == nil && len(pending(ms, done)) == 0 {
		return nil, nil
	}
	err = locked(ctx, db, table, func(ctx context.Context, tx bun.Tx) error {
		if err := createMigrationsTable(ctx, tx, table); err != nil {
			return err
		}
		done, err := appliedNames(ctx, tx, table)
		if err != nil {
			return err
		}
		todo := pending(ms, done)
		if len(todo) == 0 {
			return nil
		}
		var group int64
		if err := tx.NewSelect().TableExpr("?", bun.Ident(table)).ColumnExpr("COALESCE(MAX(group_id), 0)").Scan(ctx, &group); err != nil {
			return fmt.Errorf("storage: read %s: %w", table, err)
		}
		for _, m := range todo {
			if err := m.Up(ctx, tx); err != nil {
				return fmt.Errorf("storage: migration %s: %w", m.Name, err)
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO ? (name, group_id, migrated_at) VALUES (?, ?, ?)",
				bun.Ident(table), m.Name, group+1, time.Now().UTC()); err != nil {
				return fmt.Errorf("storage: record migration %s: %w", m.Name, err)
			}
			applied = append(applied, m.Name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

// Rollback undoes the last group of migrations applied by Migrate, newest first, and returns
// their names.
func Rollback(ctx context.Context, db *bun.DB, table string, ms *Migrations) (rolledBack []string, err error) {
	err = locked(ctx, db, table, func(ctx context.Context, tx bun.Tx) error {
		var names []string
		err := tx.NewSelect().TableExpr("?", bun.Ident(table)).Column("name").
			Where("group_id = (SELECT MAX(group_id) FROM ?)", bun.Ident(table)).OrderExpr("id DESC").Scan(ctx, &names)
		if err != nil {
			return fmt.Errorf("storage: read %s: %w", table, err)
		}
		for _, name := range names {
			i := slices.IndexFunc(ms.list, func(m Migration) bool { return m.Name == name })
			if i < 0 || ms.list[i].Down == nil {
				return fmt.Errorf("storage: migration %s cannot be undone", name)
			}
			if err := ms.list[i].Down(ctx, tx); err != nil {
				return fmt.Errorf("storage: undo %s: %w", name, err)
			}
			if _, err := tx.ExecContext(ctx, "DELETE FROM ? WHERE name = ?", bun.Ident(table), name); err != nil {
				return fmt.Errorf("storage: undo %s: %w", name, err)
			}
			rolledBack = append(rolledBack, name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rolledBack, nil
}

func pending(ms *Migrations, done map[string]bool) []Migration {
	var out []Migration
	for _, m := range ms.list {
		if !done[m.Name] {
			out = append(out, m)
		}
	}
	return out
}

func appliedNames(ctx context.Context, db bun.IDB, table string) (map[string]bool, error) {
	var names []string
	if err := db.NewSelect().TableExpr("?", bun.Ident(table)).Column("name").Scan(ctx, &names); err != nil {
		return nil, err
	}
	done := make(map[string]bool, len(names))
	for _, n := range names {
		done[n] = true
	}
	return done, nil
}

func createMigrationsTable(ctx context.Context, tx bun.Tx, table string) error {
	ddl := expandDDL(`CREATE TABLE IF NOT EXISTS ? (
		id $ID,
		name VARCHAR NOT NULL,
		group_id BIGINT NOT NULL,
		migrated_at $TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
	)`, IsPostgres(tx))
	if _, err := tx.ExecContext(ctx, ddl, bun.Ident(table)); err != nil {
		return fmt.Errorf("storage: create %s: %w", table, err)
	}
	return nil
}

// locked runs fn in one transaction under the migration lock of table (see Migrate).
func locked(ctx context.Context, db *bun.DB, table string, fn func(ctx context.Context, tx bun.Tx) error) error {
	if !IsPostgres(db) {
		// BEGIN IMMEDIATE (_txlock=immediate): the run holds SQLite's write lock from its first
		// statement; another process waits for it (busy_timeout), then finds every migration
		// applied.
		return db.RunInTx(ctx, nil, fn)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("storage: migration lock: %w", err)
	}
	defer conn.Close()
	// A migration, and the wait for another instance's, may take longer than a request's
	// statement_timeout (WithStatementTimeout).
	if _, err := conn.ExecContext(ctx, "SET statement_timeout = 0; SET lock_timeout = 0"); err != nil {
		return fmt.Errorf("storage: migration lock: %w", err)
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "RESET statement_timeout; RESET lock_timeout")
	}()
	// Keyed by schema and table, so parallel test schemas do not wait for each other.
	const key = "hashtext(current_schema() || '.' || ?)"
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock("+key+")", table); err != nil {
		return fmt.Errorf("storage: migration lock: %w", err)
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock("+key+")", table)
	}()
	return conn.RunInTx(ctx, &sql.TxOptions{}, fn)
}

// DDL runs each statement on tx after expanding the engine-specific tokens:
//
//	$ID         BIGSERIAL PRIMARY KEY           | INTEGER PRIMARY KEY AUTOINCREMENT
//	$JSON       JSONB                           | TEXT
//	$TIMESTAMP  TIMESTAMPTZ                     | TIMESTAMP
//	$DECIMAL    NUMERIC                         | TEXT     (precision goes after it, e.g. $DECIMAL(18,2);
//	                                                        SQLite keeps text as written, NUMERIC
//	                                                        only 15 digits: see MoneyAsText)
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
		r = strings.NewReplacer("$ID", "INTEGER PRIMARY KEY AUTOINCREMENT", "$JSON", "TEXT", "$TIMESTAMP", "TIMESTAMP", "$DECIMAL", "TEXT")
	}
	return r.Replace(stmt)
}
