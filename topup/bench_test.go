package topup

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/storage/storagetest"
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
