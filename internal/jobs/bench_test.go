package jobs_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// benchArgs is about the size of a top-up notification's args (fifteen members).
type benchArgs struct {
	Ref, Event, Subscriber, Product, Amount, Currency, Status, Carrier string
	Invoice, Source, User, Email, Name, Reason, At                     string
}

func (benchArgs) Kind() string { return "bench" }

// BenchmarkInsertTx measures InsertTx's own row insert (the path every job of the services
// takes after the first of its kind), 100 jobs per transaction so that the commit's fsync does
// not hide the statement's cost.
func BenchmarkInsertTx(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			db := storagetest.Fresh(b, engine).DB
			if err := jobs.Migrate(b.Context(), db); err != nil {
				b.Fatal(err)
			}
			q, err := jobs.New(db, nil, jobs.Config{Logger: quietLogger()})
			if err != nil {
				b.Fatal(err)
			}
			args := benchArgs{Ref: "REF", Event: "recharge-success", Subscriber: "0991234567", Product: "RECCARRIER3",
				Amount: "3.00", Currency: "USD", Status: "success", Carrier: "CARRIER-TX-0000001", Invoice: "001-002-000000123",
				Source: "erp", User: "cashier@example.com", Email: "client@example.com", Name: "Cliente de Prueba",
				Reason: "", At: "2026-11-27T21:00:00.000Z"}
			insert := func(n int) {
				err := db.RunInTx(b.Context(), nil, func(ctx context.Context, tx bun.Tx) error {
					for i := range n {
						args.Ref = strconv.Itoa(i)
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
			insert(1) // the first of its kind goes through River's own insert
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += 100 {
				insert(min(100, b.N-done))
			}
		})
	}
}
