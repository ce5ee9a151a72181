package topup

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/storage/storagetest"
	"github.com/uptrace/bun"
)

// BenchmarkInsertInvoice measures the webhook's first write: the pending record of an invoice
// (INSERT ... ON CONFLICT (source_xml_hash) DO NOTHING), committed, with a raw XML and payload of
// a typical invoice's size.
func BenchmarkInsertInvoice(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			db := storagetest.Fresh(b, engine).DB
			if _, err := Migrate(b.Context(), db); err != nil {
				b.Fatal(err)
			}
			if err := jobs.Migrate(b.Context(), db); err != nil {
				b.Fatal(err)
			}
			q, err := jobs.New(db, nil, jobs.Config{})
			if err != nil {
				b.Fatal(err)
			}
			store := NewStore(db, q)
			raw := "<invoice>" + strings.Repeat("x", 3000) + "</invoice>"
			now := dbTime(time.Now())
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				rec := &Transaction{ID: mustV7(), ExternalTransactionID: carrier.NewExternalTransactionID(), Source: SourceWorkflowWebhook,
					SubscriberID: "0991234567", OfferID: "31", Quantity: 1, Status: StatusPending, SourceXMLHash: "h" + strconv.Itoa(i),
					InvoiceNumber: "001-002-" + strconv.Itoa(i), RawRequestXML: raw, SourcePayload: raw, CreatedAt: now, UpdatedAt: now}
				if dup, err := store.InsertInvoice(b.Context(), rec, nil); err != nil || dup != nil {
					b.Fatalf("%v %v", dup, err)
				}
			}
		})
	}
}

// BenchmarkNotifications measures the read of one transaction's notification jobs (GET
// /transactions/{id}) while River holds the jobs of 20,000 other top-ups, as it does for a
// day's completed jobs, with and without JobIndex.
func BenchmarkNotifications(b *testing.B) {
	const others = 20000
	for _, c := range []struct {
		name string
		opts []jobs.MigrateOption
	}{{"sqlite/JobIndex", []jobs.MigrateOption{JobIndex}}, {"sqlite/no-index", nil},
		{"postgres/JobIndex", []jobs.MigrateOption{JobIndex}}, {"postgres/no-index", nil}} {
		b.Run(c.name, func(b *testing.B) {
			engine, _, _ := strings.Cut(c.name, "/")
			db := storagetest.Fresh(b, engine).DB
			if _, err := Migrate(b.Context(), db); err != nil {
				b.Fatal(err)
			}
			if err := jobs.Migrate(b.Context(), db, c.opts...); err != nil {
				b.Fatal(err)
			}
			q, err := jobs.New(db, nil, jobs.Config{})
			if err != nil {
				b.Fatal(err)
			}
			store := NewStore(db, q)
			target := mustV7()
			for i := 0; i <= others; i += 1000 {
				err := db.RunInTx(b.Context(), nil, func(ctx context.Context, tx bun.Tx) error {
					for j := i; j < i+1000 && j <= others; j++ {
						id := mustV7()
						if j == others/2 {
							id = target
						}
						n := Notification{Event: KindRechargeSuccess, Recipients: []string{"sucursal@example.com"},
							TransactionID: id.String(), Source: SourceWorkflowWebhook, Status: StatusSuccess, SubscriberID: "0991234567",
							OfferID: "31", Amount: "3.00", InvoiceNumber: "001-002-" + strconv.Itoa(j), OccurredAt: time.Now()}
						args, err := n.Args()
						if err != nil {
							return err
						}
						if err := q.InsertTx(ctx, tx, args, nil); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			if engine == "postgres" {
				// As autovacuum has done for a day's jobs: without statistics on the index's
				// expression PostgreSQL also reads the whole of river_job's fetching index.
				if _, err := db.ExecContext(b.Context(), "ANALYZE river_job"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				notes, err := store.Notifications(b.Context(), target)
				if err != nil || len(notes) != 1 {
					b.Fatalf("%v %v", notes, err)
				}
			}
		})
	}
}

// BenchmarkList measures one page of GET /transactions (List: the page and the total) over
// 50,000 records of 60 days, most of them webhook top-ups that succeeded, for the filters a
// dashboard uses.
func BenchmarkList(b *testing.B) {
	const records = 50000
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			db := storagetest.Fresh(b, engine).DB
			if _, err := Migrate(b.Context(), db); err != nil {
				b.Fatal(err)
			}
			store := NewStore(db, nil)
			end := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
			for i := 0; i < records; i += 1000 {
				batch := make([]Transaction, 0, 1000)
				for j := i; j < i+1000; j++ {
					at := end.Add(-time.Duration(records-j) * 60 * 24 * time.Hour / records)
					t := Transaction{ID: mustV7(), ExternalTransactionID: carrier.NewExternalTransactionID(), Source: SourceWorkflowWebhook,
						SubscriberID: "5939" + strconv.Itoa(10000000+j%5000), OfferID: "31", Quantity: 1, Status: StatusSuccess,
						SourceXMLHash: "h" + strconv.Itoa(j), InvoiceNumber: "001-002-" + strconv.Itoa(j), CreatedAt: at, UpdatedAt: at}
					switch {
					case j%50 == 0:
						t.Status = StatusUnavailable
					case j%10 == 1:
						t.Status = StatusFailed
					case j%10 == 2:
						t.Source, t.SourceXMLHash, t.InvoiceNumber = SourceDashboard, "", ""
					}
					batch = append(batch, t)
				}
				if _, err := db.NewInsert().Model(&batch).Exec(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
			if engine == "postgres" {
				if _, err := db.ExecContext(b.Context(), "VACUUM ANALYZE topup_transactions"); err != nil {
					b.Fatal(err)
				}
			}
			week := Day{Year: 2026, Month: 11, Day: 22}
			for _, c := range []struct {
				name string
				f    Filter
			}{
				{"all", Filter{}},
				{"status=success", Filter{Status: StatusSuccess}},
				{"status=unavailable", Filter{Status: StatusUnavailable}},
				{"source=dashboard", Filter{Source: SourceDashboard}},
				{"status=success,last-week", Filter{Status: StatusSuccess, From: week}},
				{"page=200", Filter{Page: 200}},
			} {
				b.Run(c.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						page, total, err := store.List(b.Context(), c.f)
						if err != nil || len(page) == 0 || total == 0 {
							b.Fatalf("%d records of %d, %v", len(page), total, err)
						}
					}
				})
			}
		})
	}
}
