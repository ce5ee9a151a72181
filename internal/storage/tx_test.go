package storage_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

var errRefused = errors.New("refused by the closure")

// Concurrent transactions each keep their own outcome, whether or not they were committed in one
// group: an error or a panic undoes that transaction's rows only, and every committed one is
// there afterwards.
func TestRunInTxKeepsEachOutcome(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		if _, err := storage.Migrate(t.Context(), tg.DB, "test_migrations", testMigrations); err != nil {
			t.Fatal(err)
		}
		const n = 60
		type outcome struct {
			err      error
			panicked any
		}
		outcomes := make([]outcome, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				defer func() { outcomes[i].panicked = recover() }()
				outcomes[i].err = storage.RunInTx(t.Context(), tg.DB, func(ctx context.Context, tx bun.Tx) error {
					it := &item{Code: fmt.Sprintf("C%02d", i), Estado: "NEW", CreatedAt: time.Now().UTC()}
					if _, err := tx.NewInsert().Model(it).Exec(ctx); err != nil {
						return err
					}
					switch i % 10 {
					case 3:
						return errRefused
					case 7:
						panic(fmt.Sprintf("closure %d panicked", i))
					}
					return nil
				})
			})
		}
		close(start)
		wg.Wait()

		var codes []string
		if err := tg.DB.NewSelect().Model((*item)(nil)).Column("code").Order("code").Scan(t.Context(), &codes); err != nil {
			t.Fatal(err)
		}
		stored := map[string]bool{}
		for _, c := range codes {
			stored[c] = true
		}
		for i, o := range outcomes {
			code := fmt.Sprintf("C%02d", i)
			switch i % 10 {
			case 3:
				if !errors.Is(o.err, errRefused) || stored[code] {
					t.Errorf("%s: err %v, stored %v; want errRefused and no row", code, o.err, stored[code])
				}
			case 7:
				if o.panicked != fmt.Sprintf("closure %d panicked", i) || stored[code] {
					t.Errorf("%s: panic %v, stored %v; want the closure's panic in the caller and no row", code, o.panicked, stored[code])
				}
			default:
				if o.err != nil || o.panicked != nil || !stored[code] {
					t.Errorf("%s: err %v, panic %v, stored %v; want committed", code, o.err, o.panicked, stored[code])
				}
			}
		}
		if want := n - 2*n/10; len(codes) != want {
			t.Errorf("%d rows, want %d", len(codes), want)
		}
	})
}

// On SQLite, transactions waiting for the connection are committed together, and the work of a
// transaction that failed inside a group (here a unique violation) does not leak into it.
func TestRunInTxGroupsSQLiteCommits(t *testing.T) {
	tg := storagetest.SQLite(t)
	if _, err := storage.Migrate(t.Context(), tg.DB, "test_migrations", testMigrations); err != nil {
		t.Fatal(err)
	}
	var groups, largest atomic.Int32
	storage.OnGroupCommit(func(n int) {
		groups.Add(1)
		if int32(n) > largest.Load() {
			largest.Store(int32(n))
		}
	})
	t.Cleanup(func() { storage.OnGroupCommit(nil) })

	const n = 200
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range n {
		wg.Go(func() {
			err := storage.RunInTx(t.Context(), tg.DB, func(ctx context.Context, tx bun.Tx) error {
				if _, err := tx.NewUpdate().Model((*item)(nil)).Set("estado = 'SEEN'").Where("estado = 'NEW'").Exec(ctx); err != nil {
					return err
				}
				// Every tenth one collides with the previous one's code.
				code := fmt.Sprintf("G%03d", i-i%10/9)
				_, err := tx.NewInsert().Model(&item{Code: code, Estado: "NEW", CreatedAt: time.Now().UTC()}).Exec(ctx)
				return err
			})
			if err != nil {
				if !storage.IsUniqueViolation(err) {
					t.Errorf("transaction %d: %v", i, err)
				}
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if groups.Load() >= n || largest.Load() < 2 {
		t.Fatalf("%d commits for %d transactions (largest group %d): nothing was grouped", groups.Load(), n, largest.Load())
	}
	count, err := tg.DB.NewSelect().Model((*item)(nil)).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if count+int(failed.Load()) != n {
		t.Fatalf("%d rows + %d failed transactions, want %d", count, failed.Load(), n)
	}
	t.Logf("%d transactions in %d commits, largest group %d", n, groups.Load(), largest.Load())
}

// In a SQLite commit group, the failure of the group's first member (here B, then D) undoes its
// rows only: the members after it commit, in the same group.
func TestRunInTxFirstOfGroupFails(t *testing.T) {
	tg := storagetest.SQLite(t)
	if _, err := storage.Migrate(t.Context(), tg.DB, "test_migrations", testMigrations); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	var mu sync.Mutex
	storage.OnGroupCommit(func(n int) { mu.Lock(); sizes = append(sizes, n); mu.Unlock() })
	t.Cleanup(func() { storage.OnGroupCommit(nil) })

	insert := func(code string, fail bool) func(ctx context.Context, tx bun.Tx) error {
		return func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.NewInsert().Model(&item{Code: code, Estado: "NEW", CreatedAt: time.Now().UTC()}).Exec(ctx); err != nil {
				return err
			}
			if fail {
				return errRefused
			}
			return nil
		}
	}
	// A holds the connection while B, C, D and E queue behind it, in that order: each is
	// started once the one before it is in the queue.
	queued := make(chan int, 8)
	storage.OnGroupQueued(func(n int) { queued <- n })
	t.Cleanup(func() { storage.OnGroupQueued(nil) })
	started, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	errs := map[string]error{}
	run := func(code string, fn func(ctx context.Context, tx bun.Tx) error) {
		wg.Go(func() {
			err := storage.RunInTx(t.Context(), tg.DB, fn)
			mu.Lock()
			errs[code] = err
			mu.Unlock()
		})
	}
	run("A", func(ctx context.Context, tx bun.Tx) error {
		close(started)
		<-release
		return insert("A", false)(ctx, tx)
	})
	<-started
	<-queued // A's own
	for i, m := range []struct {
		code string
		fail bool
	}{{"B", true}, {"C", false}, {"D", true}, {"E", false}} {
		run(m.code, insert(m.code, m.fail))
		if n := <-queued; n != i+1 {
			t.Fatalf("%s joined a queue of %d, want %d behind A", m.code, n, i+1)
		}
	}
	close(release)
	wg.Wait()

	var codes []string
	if err := tg.DB.NewSelect().Model((*item)(nil)).Column("code").Order("code").Scan(t.Context(), &codes); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(codes, ","); got != "A,C,E" {
		t.Errorf("rows %s, want A,C,E", got)
	}
	for code, want := range map[string]error{"A": nil, "B": errRefused, "C": nil, "D": errRefused, "E": nil} {
		if !errors.Is(errs[code], want) || (want == nil && errs[code] != nil) {
			t.Errorf("%s: err %v, want %v", code, errs[code], want)
		}
	}
	if !slices.Equal(sizes, []int{1, 4}) {
		t.Errorf("committed groups of %v, want [1 4] (A alone, then B to E)", sizes)
	}
}

// A caller whose context ended while it waited for its turn gets the context's error, and its
// closure never runs.
func TestRunInTxCallerGoneBeforeItsTurn(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		ran := false
		err := storage.RunInTx(ctx, tg.DB, func(context.Context, bun.Tx) error { ran = true; return nil })
		if !errors.Is(err, context.Canceled) || ran {
			t.Fatalf("err %v, ran %v; want context.Canceled and no run", err, ran)
		}
	})
}

// The pragmas of every connection Open makes on SQLite: commits durable (synchronous FULL; with
// WAL, NORMAL would lose the last commits on a power cut), and the statement and savepoint
// journals in memory (temp_store MEMORY; the package documentation says why).
func TestSQLitePragmas(t *testing.T) {
	tg := storagetest.SQLite(t)
	for _, tc := range []struct {
		pragma string
		want   int
	}{
		{"synchronous", 2}, // FULL
		{"temp_store", 2},  // MEMORY
	} {
		t.Run(tc.pragma, func(t *testing.T) {
			var got int
			if err := tg.DB.QueryRowContext(t.Context(), "PRAGMA "+tc.pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("PRAGMA %s = %d, want %d", tc.pragma, got, tc.want)
			}
		})
	}
}
