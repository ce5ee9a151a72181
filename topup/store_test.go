package topup

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// sourceHashKey is the webhook's idempotency key, which InsertInvoice leaves to ON CONFLICT; the
// test below checks that it is not confused with the action token's.
var sourceHashKey = storage.Unique{Name: "topup_transactions_source_xml_hash_key", Table: "topup_transactions", Columns: []string{"source_xml_hash"}}

// TestStore: the store recognises its two unique keys by constraint (PostgreSQL's name,
// SQLite's columns), never by the text of the error; InsertInvoice names the record already
// holding a hash instead of inserting; Update settles all or nothing.
func TestStore(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, Config{})
		now := dbTime(time.Now())
		record := func(ext, hash string, status Status) *Transaction {
			return &Transaction{ID: mustV7(), ExternalTransactionID: ext, Source: SourceWorkflowWebhook, Quantity: 1,
				Status: status, SourceXMLHash: hash, CreatedAt: now, UpdatedAt: now}
		}

		t.Run("unique keys by name", func(t *testing.T) {
			ctx := t.Context()
			if err := insert(ctx, tg.DB, record("EXT-1", "hash-1", StatusRejected)); err != nil {
				t.Fatal(err)
			}
			err := insert(ctx, tg.DB, record("EXT-2", "hash-1", StatusRejected))
			if !sourceHashKey.Violated(err) || actionTokenKey.Violated(err) {
				t.Fatalf("same hash: %v, want the source_xml_hash key alone", err)
			}
			err = insert(ctx, tg.DB, record("EXT-1", "hash-2", StatusRejected))
			if err == nil || sourceHashKey.Violated(err) || actionTokenKey.Violated(err) {
				t.Fatalf("same external id: %v, want a violation of neither key", err)
			}
			spend := func() error {
				return e.store.Admit(ctx, record(carrier.NewExternalTransactionID(), "", StatusPending), Admission{
					TokenID: "jti-once", TokenExpiresAt: now.Add(time.Minute), ThrottleLimit: 10, ThrottleWindow: time.Minute, Unlimited: true,
				})
			}
			if err := spend(); err != nil {
				t.Fatal(err)
			}
			if err := spend(); !errors.Is(err, ErrActionTokenUsed) {
				t.Fatalf("second use: %v, want ErrActionTokenUsed", err)
			}
		})

		t.Run("insert invoice names the holder", func(t *testing.T) {
			ctx := t.Context()
			first := record("", "held", StatusRejected)
			if holder, err := e.store.InsertInvoice(ctx, first, nil); err != nil || holder != nil {
				t.Fatalf("first: holder %v, err %v", holder, err)
			}
			second := record("", "held", StatusRejected)
			holder, err := e.store.InsertInvoice(ctx, second, nil)
			if err != nil || holder == nil || holder.ID != first.ID {
				t.Fatalf("second: holder %+v, err %v; want the first record", holder, err)
			}
			if _, err := e.store.Get(ctx, second.ID); !errors.Is(err, ErrNotFound) {
				t.Fatalf("the second record was inserted: %v", err)
			}
		})

		t.Run("update settles all or nothing", func(t *testing.T) {
			ctx := t.Context()
			rec := record("", "", StatusPending)
			if err := e.store.Insert(ctx, rec, nil); err != nil {
				t.Fatal(err)
			}
			call := func() *CarrierCall {
				return &CarrierCall{TransactionID: rec.ID, Function: carrier.FunctionTopup, Outcome: string(StatusSuccess), CreatedAt: now}
			}
			if _, err := e.store.Update(ctx, mustV7(), func(*Transaction) (Settlement, error) { return Settlement{}, nil }); !errors.Is(err, ErrNotFound) {
				t.Fatalf("unknown id: %v, want ErrNotFound", err)
			}
			boom := errors.New("boom")
			_, err := e.store.Update(ctx, rec.ID, func(t *Transaction) (Settlement, error) {
				_ = t.Succeed(CarrierReply{})
				return Settlement{Save: true, Call: call()}, boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("failing closure: %v, want its error", err)
			}
			got, err := e.store.Update(ctx, rec.ID, func(t *Transaction) (Settlement, error) {
				_ = t.Succeed(CarrierReply{}) // not saved
				return Settlement{Call: call()}, nil
			})
			if err != nil || got.Status != StatusPending {
				t.Fatalf("audit only: %+v, %v; want the record as stored", got, err)
			}
			got, err = e.store.Update(ctx, rec.ID, func(t *Transaction) (Settlement, error) {
				if err := t.Succeed(CarrierReply{IDRecarga: "77"}); err != nil {
					return Settlement{}, err
				}
				n, _ := notificationFor(t, testOperations, now)
				return Settlement{Save: true, Call: call(), Notice: &n}, nil
			})
			if err != nil || got.Status != StatusSuccess || got.CarrierIDRecarga != "77" {
				t.Fatalf("saved: %+v, %v", got, err)
			}
			stored, _ := e.store.Get(ctx, rec.ID)
			calls, _ := e.store.CarrierCalls(ctx, rec.ID)
			notes, _ := e.store.Notifications(ctx, rec.ID)
			if stored.Status != StatusSuccess || len(calls) != 2 || len(notes) != 1 || notes[0].Kind != KindRechargeSuccess {
				t.Fatalf("stored %s, %d calls, notifications %+v; want success, 2 calls (the failed closure's rolled back), 1 job", stored.Status, len(calls), notes)
			}
		})

		t.Run("update held: compare-and-set, or Update when the record moved", func(t *testing.T) {
			ctx := t.Context()
			succeed := func(seen *[]string) func(*Transaction) (Settlement, error) {
				return func(cur *Transaction) (Settlement, error) {
					*seen = append(*seen, fmt.Sprintf("%s/v%d/%s", cur.Status, cur.Version, cur.IncidentNote))
					if cur.Status != StatusPending {
						return Settlement{}, nil
					}
					cur.Status, cur.CarrierIDRecarga = StatusSuccess, "88"
					return Settlement{Save: true}, nil
				}
			}
			held := record(carrier.NewExternalTransactionID(), "", StatusPending)
			if err := insert(ctx, tg.DB, held); err != nil {
				t.Fatal(err)
			}
			var seen []string
			got, err := e.store.UpdateHeld(ctx, held, succeed(&seen))
			stored, _ := e.store.Get(ctx, held.ID)
			if err != nil || len(seen) != 1 || got.Version != 1 || stored.Version != 1 || stored.Status != StatusSuccess || stored.CarrierIDRecarga != "88" {
				t.Fatalf("untouched record: %v, fn saw %v, got v%d, stored %+v", err, seen, got.Version, stored)
			}

			// Someone writes the record after the caller took it: the held copy is stale.
			moved := record(carrier.NewExternalTransactionID(), "", StatusPending)
			if err := insert(ctx, tg.DB, moved); err != nil {
				t.Fatal(err)
			}
			if _, err := e.store.Update(ctx, moved.ID, func(cur *Transaction) (Settlement, error) {
				cur.IncidentNote = "noted meanwhile"
				return Settlement{Save: true}, nil
			}); err != nil {
				t.Fatal(err)
			}
			seen = nil
			got, err = e.store.UpdateHeld(ctx, moved, succeed(&seen))
			stored, _ = e.store.Get(ctx, moved.ID)
			if err != nil || len(seen) != 2 || seen[1] != "pending/v1/noted meanwhile" || got.Version != 2 ||
				stored.Status != StatusSuccess || stored.IncidentNote != "noted meanwhile" || stored.Version != 2 {
				t.Fatalf("stale copy: %v, fn saw %v, got v%d, stored %+v; want a second run on the stored record, both writes kept", err, seen, got.Version, stored)
			}
		})
	})
}

func TestCallStatus(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want Status
	}{
		{"no error", nil, StatusSuccess},
		{"business refusal", &carrier.Error{Op: carrier.FunctionTopup, Status: "ERROR", Code: "1"}, StatusFailed},
		{"wrapped business refusal", fmt.Errorf("x: %w", &carrier.Error{Code: "1"}), StatusFailed},
		{"not sent, invalid request", fmt.Errorf("%w: no offer", carrier.ErrInvalidRequest), StatusFailed},
		{"SOAP fault", &carrier.FaultError{Code: "350"}, StatusUnavailable},
		{"timeout", &carrier.TransportError{Op: carrier.FunctionTopup, Err: context.DeadlineExceeded}, StatusUnavailable},
		{"any other error", errors.New("boom"), StatusUnavailable},
	}
	for _, c := range cases {
		if got := callStatus(c.err); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
