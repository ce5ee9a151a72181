package storage

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/uptrace/bun"
)

// MoneyAsText makes the money columns of table keep every digit on SQLite, where a NUMERIC
// column keeps 15 significant digits (9999999999999999.99 became 10000000000000000): it rebuilds
// the table with those columns as TEXT, which SQLite stores as written (the DDL token $DECIMAL is
// TEXT on SQLite since). Rows, indexes and the foreign keys that point at the table are kept. On
// PostgreSQL, whose NUMERIC is exact, and for columns already TEXT it does nothing. Call it from a
// migration, inside its transaction.
func MoneyAsText(ctx context.Context, tx bun.Tx, table string, columns ...string) error {
	if IsPostgres(tx) {
		return nil
	}
	var create string
	if err := tx.NewRaw("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(ctx, &create); err != nil {
		return fmt.Errorf("storage: read the schema of %s: %w", table, err)
	}
	rewritten := create
	for _, col := range columns {
		re := regexp.MustCompile(`(?i)(\b` + regexp.QuoteMeta(col) + `\s+)NUMERIC(\s*\(\s*\d+\s*,\s*\d+\s*\))?`)
		rewritten = re.ReplaceAllString(rewritten, "${1}TEXT")
	}
	if rewritten == create {
		return nil
	}
	var indexes []string
	if err := tx.NewRaw("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", table).
		Scan(ctx, &indexes); err != nil {
		return fmt.Errorf("storage: read the indexes of %s: %w", table, err)
	}
	hold := table + "__hold"
	stmts := []string{
		// The table is dropped and made again under its own name, so the foreign keys of other
		// tables keep pointing at it (a rename would rewrite them). Deferred, their checks count
		// the rows the drop orphans and the rows put back again, and end even at the commit.
		"PRAGMA defer_foreign_keys = ON",
		fmt.Sprintf("CREATE TEMP TABLE %s AS SELECT * FROM %s", hold, table),
		"DROP TABLE " + table,
		rewritten,
		fmt.Sprintf("INSERT INTO %s SELECT * FROM %s", table, hold),
		"DROP TABLE " + hold,
	}
	stmts = append(stmts, indexes...)
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("storage: money columns of %s as text: %w\n%s", table, err, strings.TrimSpace(s))
		}
	}
	return nil
}
