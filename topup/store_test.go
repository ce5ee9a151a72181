package topup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/internal/jobs"
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

// TestInsertsReadNothingBack: a top-up record is inserted without RETURNING. bun's default for
// a model returns every nullable column (the raw XML and payload too), which PostgreSQL sends
// back and SQLite compiles into a RETURNING trigger on every insert.
func TestInsertsReadNothingBack(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		_, faults, store, _ := countedStore(t, tg)
		now := dbTime(time.Now())
		rec := func(hash string) *Transaction {
			return &Transaction{ID: mustV7(), ExternalTransactionID: carrier.NewExternalTransactionID(), Source: SourceWorkflowWebhook,
				SubscriberID: "0991234567", OfferID: "31", Quantity: 1, Status: StatusPending, SourceXMLHash: hash,
				RawRequestXML: "<invoice/>", SourcePayload: "{}", CreatedAt: now, UpdatedAt: now}
		}
		faults.Record()
		if err := store.Insert(t.Context(), rec(""), nil); err != nil {
			t.Fatal(err)
		}
		if dup, err := store.InsertInvoice(t.Context(), rec("h1"), nil); err != nil || dup != nil {
			t.Fatalf("InsertInvoice: %v, %v", dup, err)
		}
		if dup, err := store.InsertInvoice(t.Context(), rec("h1"), nil); err != nil || dup == nil {
			t.Fatalf("InsertInvoice of a recorded hash: %v, %v; want the recorded one", dup, err)
		}
		inserts := 0
		for _, q := range faults.Recorded() {
			if strings.HasPrefix(q, `INSERT INTO "topup_transactions"`) {
				inserts++
				if strings.Contains(q, "RETURNING") {
					t.Errorf("the insert reads columns back: %.200s", q)
				}
			}
		}
		if inserts != 3 {
			t.Fatalf("%d inserts recorded, want 3", inserts)
		}
	})
}

// countedStore is a Store on tg whose statements faults records and counts, and the env of the
// same database.
func countedStore(t *testing.T, tg storagetest.Target) (*env, *storagetest.Faults, *Store, *counts) {
	t.Helper()
	e := newEnv(t, tg, Config{})
	faults := &storagetest.Faults{}
	db := faults.Open(t, tg)
	q, err := jobs.New(db, nil, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	obs := newCounts()
	return e, faults, NewStore(db, q, WithObserver(obs)), obs
}

// TestSettlementOneStatementOnPostgres: on PostgreSQL, UpdateHeld writes a settlement (the
// record's compare-and-set, the carrier call's audit row, the notification job) as one
// statement, once River has inserted the first job of its kind; its rows are those the
// transaction writes.
func TestSettlementOneStatementOnPostgres(t *testing.T) {
	e, faults, store, obs := countedStore(t, storagetest.Postgres(t))
	ctx := t.Context()
	now := dbTime(time.Now())

	pending := func() *Transaction {
		rec := &Transaction{ID: mustV7(), ExternalTransactionID: carrier.NewExternalTransactionID(), Source: SourceWorkflowWebhook,
			SubscriberID: "0991234567", OfferID: "31", Quantity: 1, Status: StatusPending, NotificationEmail: "branch@example.com",
			RawRequestXML: `<?xml version="1.0"?><invoice>it's</invoice>`, CreatedAt: now, UpdatedAt: now}
		if err := store.Insert(ctx, rec, nil); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	settle := func(rec *Transaction) (*Transaction, []string) {
		call := &CarrierCall{TransactionID: rec.ID, Function: carrier.FunctionTopup, Outcome: string(StatusSuccess),
			RequestXML: `<?xml version="1.0"?><exec_req>'?'</exec_req>`, ResponseXML: "<ok/>", DurationMS: 12, CreatedAt: now}
		faults.Record()
		got, err := store.UpdateHeld(ctx, rec, func(cur *Transaction) (Settlement, error) {
			if err := cur.Succeed(CarrierReply{IDRecarga: "77", Message: "it's done?", RequestXML: call.RequestXML, ResponseXML: call.ResponseXML}); err != nil {
				return Settlement{}, err
			}
			cur.UpdatedAt = now.Add(time.Second)
			n, _ := notificationFor(cur, testOperations, now)
			return Settlement{Save: true, Call: call, Notice: &n}, nil
		})
		statements := faults.Recorded()
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != 1 || call.ID == 0 {
			t.Fatalf("settled v%d, audit row id %d; want v1 and the row's id", got.Version, call.ID)
		}
		return got, statements
	}

	// The first job of its kind goes through River's InsertTx, in the transaction.
	first := pending()
	_, statements := settle(first)
	if len(statements) < 5 || statements[0] != "BEGIN" || statements[len(statements)-1] != "COMMIT" {
		t.Fatalf("first settlement: %q; want the transaction", statements)
	}
	// Then one statement.
	second := pending()
	got, statements := settle(second)
	if len(statements) != 1 || !strings.HasPrefix(statements[0], "WITH ") {
		t.Fatalf("second settlement: %d statements %q; want one WITH", len(statements), statements)
	}

	// The same rows as the transaction's.
	a, err := e.store.Get(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.store.Get(ctx, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != b.Version || got.Status != b.Status || got.CarrierIDRecarga != b.CarrierIDRecarga || !got.UpdatedAt.Equal(b.UpdatedAt) {
		t.Errorf("returned %+v\nstored %+v", *got, *b)
	}
	b.ID, b.ExternalTransactionID = a.ID, a.ExternalTransactionID
	if !reflect.DeepEqual(*a, *b) || b.Status != StatusSuccess || b.Version != 1 {
		t.Errorf("record by the transaction %+v\nby one statement %+v", *a, *b)
	}
	callsA, _ := e.store.CarrierCalls(ctx, first.ID)
	callsB, _ := e.store.CarrierCalls(ctx, second.ID)
	if len(callsA) != 1 || len(callsB) != 1 {
		t.Fatalf("audit rows: %d and %d, want 1 each", len(callsA), len(callsB))
	}
	callsB[0].ID, callsB[0].TransactionID = callsA[0].ID, callsA[0].TransactionID
	if callsA[0] != callsB[0] {
		t.Errorf("audit row by the transaction %+v\nby one statement %+v", callsA[0], callsB[0])
	}
	var nullDiagnostic bool
	if err := e.db.NewSelect().TableExpr("topup_carrier_calls").ColumnExpr("diagnostic IS NULL").
		Where("transaction_id = ?", second.ID.String()).Scan(ctx, &nullDiagnostic); err != nil || !nullDiagnostic {
		t.Errorf("empty diagnostic stored as NULL: %v, %v", nullDiagnostic, err)
	}
	rowsA, _ := e.queue.JobsWithArg(ctx, NotificationQueue, "transaction_id", first.ID.String())
	rowsB, _ := e.queue.JobsWithArg(ctx, NotificationQueue, "transaction_id", second.ID.String())
	if len(rowsA) != 1 || len(rowsB) != 1 {
		t.Fatalf("jobs: %d and %d, want 1 each", len(rowsA), len(rowsB))
	}
	ja, jb := rowsA[0], rowsB[0]
	var argsA, argsB map[string]any
	_ = json.Unmarshal(ja.EncodedArgs, &argsA)
	_ = json.Unmarshal(jb.EncodedArgs, &argsB)
	argsB["transaction_id"], argsB["external_transaction_id"] = argsA["transaction_id"], argsA["external_transaction_id"]
	if ja.Kind != jb.Kind || ja.Queue != jb.Queue || ja.State != jb.State || ja.Priority != jb.Priority || ja.MaxAttempts != jb.MaxAttempts ||
		ja.Attempt != jb.Attempt || len(ja.Tags) != len(jb.Tags) || string(ja.Metadata) != string(jb.Metadata) || !reflect.DeepEqual(argsA, argsB) {
		t.Errorf("job by River %+v %v\nby one statement %+v %v", ja, argsA, jb, argsB)
	}
	if n := obs.reachedCount(SourceWorkflowWebhook, StatusSuccess); n != 2 {
		t.Errorf("observer told of %d successes, want 2 (one per settlement)", n)
	}
}

// TestStaleSettlementWritesNothing: on PostgreSQL, a one-statement settlement whose
// compare-and-set finds the record moved writes neither the audit row nor the job; the locked
// fallback then decides on the record as stored and settles it once.
func TestStaleSettlementWritesNothing(t *testing.T) {
	e, faults, store, obs := countedStore(t, storagetest.Postgres(t))
	ctx := t.Context()
	now := dbTime(time.Now())
	pending := func() *Transaction {
		rec := &Transaction{ID: mustV7(), ExternalTransactionID: carrier.NewExternalTransactionID(), Source: SourceWorkflowWebhook,
			Quantity: 1, Status: StatusPending, CreatedAt: now, UpdatedAt: now}
		if err := store.Insert(ctx, rec, nil); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	var seen []string
	boom := errors.New("boom")
	failAgain := false
	settle := func(cur *Transaction) (Settlement, error) {
		seen = append(seen, fmt.Sprintf("%s/v%d/%s", cur.Status, cur.Version, cur.IncidentNote))
		if failAgain && len(seen) > 1 {
			return Settlement{}, boom
		}
		call := &CarrierCall{TransactionID: cur.ID, Function: carrier.FunctionTopup, Outcome: string(StatusSuccess), CreatedAt: now}
		if cur.Status != StatusPending {
			return Settlement{Call: call}, nil
		}
		_ = cur.Succeed(CarrierReply{IDRecarga: "88"})
		n, _ := notificationFor(cur, testOperations, now)
		return Settlement{Save: true, Call: call, Notice: &n}, nil
	}
	// River inserts the first job of the kind.
	if _, err := store.UpdateHeld(ctx, pending(), settle); err != nil {
		t.Fatal(err)
	}

	// Someone writes the record after the caller took it.
	held := pending()
	if _, err := e.store.Update(ctx, held.ID, func(cur *Transaction) (Settlement, error) {
		cur.IncidentNote = "noted meanwhile"
		return Settlement{Save: true}, nil
	}); err != nil {
		t.Fatal(err)
	}
	written := func() (int, int) {
		calls, err := e.store.CarrierCalls(ctx, held.ID)
		if err != nil {
			t.Fatal(err)
		}
		notes, err := e.store.Notifications(ctx, held.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(calls), len(notes)
	}

	// The statement matches no record and writes nothing; the fallback's closure fails, so
	// nothing at all is written.
	seen, failAgain = nil, true
	faults.Record()
	_, err := store.UpdateHeld(ctx, held, settle)
	statements := faults.Recorded()
	if !errors.Is(err, boom) || len(seen) != 2 {
		t.Fatalf("stale copy, failing fallback: %v, fn saw %v; want boom from the second run", err, seen)
	}
	if len(statements) < 2 || !strings.HasPrefix(statements[0], "WITH ") || statements[1] != "BEGIN" {
		t.Fatalf("statements %q; want the one-statement settlement, then the locked fallback", statements)
	}
	stored, _ := e.store.Get(ctx, held.ID)
	if calls, jobs := written(); calls != 0 || jobs != 0 || stored.Status != StatusPending || stored.Version != 1 {
		t.Fatalf("after the stale statement: %d audit rows, %d jobs, record %s v%d; want none written, pending v1", calls, jobs, stored.Status, stored.Version)
	}

	// The fallback settles the record as stored, once.
	seen, failAgain = nil, false
	got, err := store.UpdateHeld(ctx, held, settle)
	if err != nil || len(seen) != 2 || seen[1] != "pending/v1/noted meanwhile" {
		t.Fatalf("stale copy: %v, fn saw %v; want a second run on the stored record", err, seen)
	}
	stored, _ = e.store.Get(ctx, held.ID)
	if calls, jobs := written(); calls != 1 || jobs != 1 || got.Version != 2 || stored.Version != 2 ||
		stored.Status != StatusSuccess || stored.IncidentNote != "noted meanwhile" || stored.CarrierIDRecarga != "88" {
		t.Fatalf("settled: %d audit rows, %d jobs, got v%d, stored %+v; want 1, 1, success v2 with both writes", calls, jobs, got.Version, stored)
	}
	if n := obs.reachedCount(SourceWorkflowWebhook, StatusSuccess); n != 2 {
		t.Errorf("observer told of %d successes, want 2 (the first record, then this one once)", n)
	}
}
