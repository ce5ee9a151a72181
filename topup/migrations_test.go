package topup

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// TestMigrationsRoundTrip: every migration goes up, down and up again on both databases.
func TestMigrationsRoundTrip(t *testing.T) {
	storagetest.MigrationsRoundTrip(t, MigrationsTable, Migrations)
}

// TestPartialIndexesServeTheirQueries: the indexes of the mostly empty columns leave the
// records without a value out, and the statements the service runs on those columns (a
// user's daily count, the repetitions of an invoice) still search them.
func TestPartialIndexesServeTheirQueries(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		faults := &storagetest.Faults{}
		recorded := tg
		recorded.DB = faults.Open(t, tg)
		e := newEnv(t, recorded, Config{DailyLimit: 5})
		faults.Record()
		if _, err := e.svc.Recharge(t.Context(), manual(operator("u1"), "593991234567")); err != nil {
			t.Fatal(err)
		}
		// An invoice refused for its unmapped product (a record all the same), then delivered again.
		amount := decimal.RequireFromString("7.00")
		inv := WebhookRequest{InvoiceNumber: "001-001-1", ProductCode: "RECCARRIER7", SubscriberID: "593991234567", Amount: &amount,
			SourceXMLHash: strings.Repeat("c", 64)}
		var rejected *RejectedError
		if _, err := e.svc.Webhook(t.Context(), inv); !errors.As(err, &rejected) {
			t.Fatalf("first delivery: %v, want *RejectedError", err)
		}
		var dup *DuplicateError
		if _, err := e.svc.Webhook(t.Context(), inv); !errors.As(err, &dup) {
			t.Fatalf("repeated delivery: %v, want *DuplicateError", err)
		}
		statements := faults.Recorded()
		var records int
		if err := tg.DB.QueryRowContext(t.Context(), "SELECT count(*) FROM topup_transactions").Scan(&records); err != nil {
			t.Fatal(err)
		}
		if storage.IsPostgres(tg.DB) {
			// Statistics, as autovacuum keeps them: without any, PostgreSQL prices the indexes
			// of a three-row table alike and may take another one.
			if _, err := tg.DB.ExecContext(t.Context(), "ANALYZE topup_transactions"); err != nil {
				t.Fatal(err)
			}
		}

		for _, c := range []struct{ name, column, index string }{
			{"a user's daily count", "requested_by_user_id", "topup_transactions_user_created_idx"},
			{"the repetitions of an invoice", "duplicate_of", "topup_transactions_duplicate_of_idx"},
		} {
			t.Run(c.name, func(t *testing.T) {
				var entries int
				q := fmt.Sprintf("SELECT count(*) FROM topup_transactions WHERE %s IS NULL", c.column)
				if err := tg.DB.QueryRowContext(t.Context(), q).Scan(&entries); err != nil || entries == 0 {
					t.Fatalf("records without %s: %d, %v; the test needs some", c.column, entries, err)
				}
				if got := indexEntries(t, tg, c.index); got != records-entries {
					t.Errorf("%s holds %d entries, want %d (the records with %s)", c.index, got, records-entries, c.column)
				}
				var stmts []string
				for _, s := range statements {
					if strings.Contains(s, c.column+`" = '`) || strings.Contains(s, c.column+` = '`) {
						stmts = append(stmts, s)
					}
				}
				if len(stmts) == 0 {
					t.Fatalf("no statement compared %s with a value", c.column)
				}
				for _, s := range stmts {
					if plan := storagetest.Explain(t, tg, storagetest.Statement{SQL: s}); !strings.Contains(plan, c.index) {
						t.Errorf("%s\ndoes not use %s:\n%s", s, c.index, plan)
					}
				}
			})
		}
	})
}

// indexEntries counts the entries of index (the rows of its table that it holds).
func indexEntries(t *testing.T, tg storagetest.Target, index string) int {
	t.Helper()
	var n int
	var err error
	if storage.IsPostgres(tg.DB) {
		// The index's own predicate, read from the catalogue, counted on the table.
		var pred string
		err = tg.DB.QueryRowContext(t.Context(), `SELECT coalesce(pg_get_expr(indpred, indrelid), 'true') FROM pg_index
			WHERE indexrelid = to_regclass(?)`, index).Scan(&pred)
		if err == nil {
			err = tg.DB.QueryRowContext(t.Context(), "SELECT count(*) FROM topup_transactions WHERE "+pred).Scan(&n)
		}
	} else {
		// dbstat counts the cells of the index's b-tree pages.
		err = tg.DB.QueryRowContext(t.Context(), `SELECT coalesce(sum(ncell), 0) FROM dbstat WHERE name = ? AND pagetype = 'leaf'`, index).Scan(&n)
	}
	if err != nil {
		t.Fatalf("entries of %s: %v", index, err)
	}
	return n
}

// TestListPagesComeInIndexOrder: on SQLite a page of the list, whatever its status filter, is read
// from an index in the list's order (created_at DESC, id DESC), not by sorting every matching
// record, which SQLite did for a status (146 ms for a page of 50,000 records, BenchmarkList).
// PostgreSQL chooses by cost, and sorts a few rows rather than walk an index: BenchmarkList
// measures it.
func TestListPagesComeInIndexOrder(t *testing.T) {
	tg := storagetest.SQLite(t)
	faults := &storagetest.Faults{}
	db := faults.Open(t, tg)
	if _, err := Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	store := NewStore(db, nil)
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var batch []Transaction
	for i := range 300 {
		at := start.Add(time.Duration(i) * time.Hour)
		status := StatusSuccess
		if i%10 == 0 {
			status = StatusFailed
		}
		batch = append(batch, Transaction{ID: mustV7(), ExternalTransactionID: fmt.Sprint("ext-", i), Source: SourceWorkflowWebhook,
			SubscriberID: "593991234567", OfferID: "31", Quantity: 1, Status: status, SourceXMLHash: fmt.Sprint("h", i),
			CreatedAt: at, UpdatedAt: at})
	}
	if _, err := db.NewInsert().Model(&batch).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		f     Filter
		index string
	}{
		{"every record", Filter{}, "topup_transactions_created_idx"},
		{"by status", Filter{Status: StatusFailed}, "topup_transactions_status_created_idx"},
		{"by status and day", Filter{Status: StatusSuccess, From: Day{Year: 2026, Month: 11, Day: 5}}, "topup_transactions_status_created_idx"},
	} {
		t.Run(c.name, func(t *testing.T) {
			faults.Record()
			page, total, err := store.List(t.Context(), c.f)
			if err != nil || len(page) == 0 || total == 0 {
				t.Fatalf("List = %d records of %d, %v", len(page), total, err)
			}
			var pageQuery *storagetest.Statement
			for _, st := range faults.RecordedStatements() {
				if strings.Contains(st.SQL, "ORDER BY created_at DESC, id DESC") {
					pageQuery = &st
				}
			}
			if pageQuery == nil {
				t.Fatal("no statement read the page")
			}
			plan := storagetest.Explain(t, tg, *pageQuery)
			if !strings.Contains(plan, c.index) || strings.Contains(plan, "TEMP B-TREE") {
				t.Errorf("%s\nis not read from %s in order:\n%s", pageQuery.SQL, c.index, plan)
			}
		})
	}
}
