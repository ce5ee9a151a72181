package storagetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
)

// Explain returns the plan of st (a statement as the driver received it, Recorded or
// RecordedStatements), one line per row of EXPLAIN QUERY PLAN on SQLite or EXPLAIN on
// PostgreSQL. Sequential scans are priced out on PostgreSQL, where a test's small table is read
// whole otherwise: the plan says whether an index can serve the statement.
func Explain(t testing.TB, tg Target, st Statement) string {
	t.Helper()
	var plan []string
	err := tg.DB.RunInTx(t.Context(), nil, func(ctx context.Context, tx bun.Tx) error {
		prefix := "EXPLAIN QUERY PLAN "
		if storage.IsPostgres(tx) {
			prefix = "EXPLAIN "
			if _, err := tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
				return err
			}
		}
		rows, err := tx.Tx.QueryContext(ctx, prefix+st.SQL, st.Args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		for rows.Next() {
			vals := make([]any, len(cols))
			for i := range vals {
				vals[i] = new(any)
			}
			if err := rows.Scan(vals...); err != nil {
				return err
			}
			var line []string
			for _, v := range vals {
				line = append(line, fmt.Sprint(*(v.(*any))))
			}
			plan = append(plan, strings.Join(line, " "))
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatalf("explain %s: %v", st.SQL, err)
	}
	return strings.Join(plan, "\n")
}
