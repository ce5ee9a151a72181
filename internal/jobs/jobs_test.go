package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/uptrace/bun"
	"go.uber.org/goleak"

	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

const (
	testQueue = "recharge-notifications"
	// Short enough that a test waits a few hundred milliseconds, not seconds.
	poll     = 50 * time.Millisecond
	cooldown = 10 * time.Millisecond
	// Bounded wait for something that should happen within a few polls.
	deadline = 5 * time.Second
)

// notifyArgs mimics the top-up notifications: a hyphenated kind routed to a named queue.
type notifyArgs struct {
	Ref string `json:"ref"`
}

func (notifyArgs) Kind() string { return "recharge-success" }

// recorder is a worker that counts executions per Ref and can be told to fail.
type recorder struct {
	mu    sync.Mutex
	runs  map[string]int
	at    map[string][]time.Time
	fail  bool
	block chan struct{} // when non-nil, Work waits for it or for its context
	ran   chan string
}

func newRecorder() *recorder {
	return &recorder{runs: map[string]int{}, at: map[string][]time.Time{}, ran: make(chan string, 100)}
}

func (r *recorder) work(ctx context.Context, job *river.Job[notifyArgs]) error {
	r.mu.Lock()
	r.runs[job.Args.Ref]++
	r.at[job.Args.Ref] = append(r.at[job.Args.Ref], time.Now())
	fail, block := r.fail, r.block
	r.mu.Unlock()
	r.ran <- job.Args.Ref
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if fail {
		return fmt.Errorf("smtp refused attempt %d", job.Attempt)
	}
	return nil
}

func (r *recorder) count(ref string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[ref]
}

func (r *recorder) workers() *river.Workers {
	w := river.NewWorkers()
	river.AddWorker(w, river.WorkFunc(r.work))
	return w
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// setup migrates River's tables and an application table the tests change in the same
// transaction as the job insert.
func setup(t *testing.T, db *bun.DB) {
	t.Helper()
	if err := jobs.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	err := db.RunInTx(t.Context(), nil, func(ctx context.Context, tx bun.Tx) error {
		return storage.DDL(ctx, tx, `CREATE TABLE topups (ref VARCHAR(40) PRIMARY KEY, estado VARCHAR(20) NOT NULL)`)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func workerConfig() jobs.Config {
	return jobs.Config{
		Queues:        map[string]int{testQueue: 2},
		PollInterval:  poll,
		FetchCooldown: cooldown,
		Logger:        quietLogger(),
	}
}

func startQueue(t *testing.T, db *bun.DB, w *river.Workers, cfg jobs.Config) *jobs.Queue {
	t.Helper()
	q, err := jobs.New(db, w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return q
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out after %s waiting for %s", deadline, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func insertTopupWithJob(t *testing.T, db *bun.DB, q *jobs.Queue, ref string, commit bool) {
	t.Helper()
	if err := tryInsertTopupWithJob(t.Context(), db, q, ref, commit); err != nil {
		t.Fatal(err)
	}
}

var errRollback = errors.New("rollback on purpose")

// tryInsertTopupWithJob records a top-up and its notification job in one transaction, then
// commits it or rolls it back.
func tryInsertTopupWithJob(ctx context.Context, db *bun.DB, q *jobs.Queue, ref string, commit bool) error {
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO topups (ref, estado) VALUES (?, 'success')`, ref); err != nil {
			return err
		}
		if err := q.InsertTx(ctx, tx, notifyArgs{Ref: ref}, &river.InsertOpts{Queue: testQueue}); err != nil {
			return err
		}
		if !commit {
			return errRollback
		}
		return nil
	})
	if !commit {
		if errors.Is(err, errRollback) {
			return nil
		}
		return fmt.Errorf("rolled-back transaction returned %v", err)
	}
	return err
}

func countRows(t *testing.T, db bun.IDB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestInsertTxRunsOnlyCommittedJobsOnce(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		setup(t, tg.DB)
		rec := newRecorder()
		q := startQueue(t, tg.DB, rec.workers(), workerConfig())

		insertTopupWithJob(t, tg.DB, q, "rolled-back", false)
		insertTopupWithJob(t, tg.DB, q, "committed", true)

		waitFor(t, "the committed job to complete", func() bool {
			jobs, err := q.JobsByState(t.Context(), rivertype.JobStateCompleted, 0)
			return err == nil && len(jobs) == 1
		})
		// Give a duplicate or a phantom of the rolled-back job several polls to show up.
		time.Sleep(10 * poll)

		if n := rec.count("committed"); n != 1 {
			t.Errorf("committed job ran %d times, want exactly 1", n)
		}
		if n := rec.count("rolled-back"); n != 0 {
			t.Errorf("rolled-back job ran %d times, want 0", n)
		}
		if n := countRows(t, tg.DB, `SELECT count(*) FROM river_job`); n != 1 {
			t.Errorf("river_job holds %d rows, want only the committed one", n)
		}
		if n := countRows(t, tg.DB, `SELECT count(*) FROM topups`); n != 1 {
			t.Errorf("topups holds %d rows, want only the committed one", n)
		}
		done, err := q.JobsByState(t.Context(), rivertype.JobStateCompleted, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := done[0]; got.Kind != "recharge-success" || got.Queue != testQueue || got.Attempt != 1 {
			t.Errorf("completed job kind %q queue %q attempt %d, want recharge-success on %s at attempt 1", got.Kind, got.Queue, got.Attempt, testQueue)
		}
	})
}

// Many transactions enqueue at once while the worker fetches and completes: on SQLite every
// one of them queues for the single writer lock (busy_timeout) instead of failing with
// SQLITE_BUSY, and every committed job runs exactly once.
func TestConcurrentInsertTxEachRunOnce(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		setup(t, tg.DB)
		rec := newRecorder()
		cfg := workerConfig()
		cfg.Queues[testQueue] = 5
		q := startQueue(t, tg.DB, rec.workers(), cfg)

		const n = 30
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { errs[i] = tryInsertTopupWithJob(t.Context(), tg.DB, q, fmt.Sprintf("tx-%02d", i), i%3 != 0) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		committed := n - (n+2)/3
		waitFor(t, "every committed job to complete", func() bool {
			done, err := q.JobsByState(t.Context(), rivertype.JobStateCompleted, n)
			return err == nil && len(done) == committed
		})
		time.Sleep(5 * poll)
		for i := range n {
			ref, want := fmt.Sprintf("tx-%02d", i), 1
			if i%3 == 0 {
				want = 0
			}
			if got := rec.count(ref); got != want {
				t.Errorf("%s ran %d times, want %d", ref, got, want)
			}
		}
	})
}

func TestFailingJobIsRetriedWithBackoffThenDiscarded(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		setup(t, tg.DB)
		rec := newRecorder()
		rec.fail = true
		backoff := jobs.ExponentialBackoff{Initial: 100 * time.Millisecond, Max: time.Second}
		cfg := workerConfig()
		cfg.MaxAttempts = 3
		cfg.RetryPolicy = backoff
		q := startQueue(t, tg.DB, rec.workers(), cfg)

		insertTopupWithJob(t, tg.DB, q, "always-fails", true)

		var discarded []*rivertype.JobRow
		waitFor(t, "the failing job to be discarded", func() bool {
			var err error
			discarded, err = q.JobsByState(t.Context(), rivertype.JobStateDiscarded, 0)
			return err == nil && len(discarded) == 1
		})
		job := discarded[0]
		if rec.count("always-fails") != 3 || job.Attempt != 3 {
			t.Fatalf("ran %d times, attempt %d; want 3 attempts (MaxAttempts)", rec.count("always-fails"), job.Attempt)
		}
		if len(job.Errors) != 3 {
			t.Fatalf("discarded job records %d errors, want one per attempt (3)", len(job.Errors))
		}
		for i, e := range job.Errors {
			want := fmt.Sprintf("smtp refused attempt %d", i+1)
			if e.Attempt != i+1 || e.Error != want {
				t.Errorf("error %d = attempt %d %q, want attempt %d %q", i, e.Attempt, e.Error, i+1, want)
			}
		}
		if job.FinalizedAt == nil {
			t.Error("discarded job has no finalized_at")
		}
		// Each retry waited at least the policy's delay for the failures before it.
		rec.mu.Lock()
		at := rec.at["always-fails"]
		rec.mu.Unlock()
		for i := 1; i < len(at); i++ {
			if gap, min := at[i].Sub(at[i-1]), backoff.Delay(i); gap < min {
				t.Errorf("attempt %d started %s after attempt %d, want at least the backoff %s", i+1, gap, i, min)
			}
		}
	})
}

func TestJobsAreRoutedToTheirQueue(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		setup(t, tg.DB)
		rec := newRecorder()
		q := startQueue(t, tg.DB, rec.workers(), workerConfig())

		if err := q.Insert(t.Context(), notifyArgs{Ref: "elsewhere"}, &river.InsertOpts{Queue: "other-queue"}); err != nil {
			t.Fatal(err)
		}
		if err := q.Insert(t.Context(), notifyArgs{Ref: "here"}, &river.InsertOpts{Queue: testQueue}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the job on "+testQueue+" to run", func() bool { return rec.count("here") == 1 })
		time.Sleep(5 * poll)
		if n := rec.count("elsewhere"); n != 0 {
			t.Errorf("job on a queue this process does not work ran %d times", n)
		}
		avail, err := q.JobsByState(t.Context(), rivertype.JobStateAvailable, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(avail) != 1 || avail[0].Queue != "other-queue" {
			t.Errorf("available jobs %v, want the one on other-queue", avail)
		}
	})
}

// A service inserts with an insert-only Queue; a worker process, with its own connection pool
// on the same database, runs the job.
func TestInsertOnlyQueueAndSeparateWorker(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		setup(t, tg.DB)
		service, err := jobs.New(tg.DB, nil, jobs.Config{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		if err := service.Start(t.Context()); !errors.Is(err, jobs.ErrInsertOnly) {
			t.Fatalf("Start on an insert-only queue = %v, want ErrInsertOnly", err)
		}
		if err := service.Stop(t.Context()); err != nil {
			t.Fatalf("Stop on an insert-only queue = %v", err)
		}
		insertTopupWithJob(t, tg.DB, service, "from-service", true)

		workerDB, err := storage.Open(t.Context(), tg.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer workerDB.Close()
		rec := newRecorder()
		worker, err := jobs.New(workerDB, rec.workers(), workerConfig())
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(t.Context())
		runErr := make(chan error, 1)
		go func() { runErr <- worker.Run(ctx, 2*time.Second) }()

		waitFor(t, "the worker process to run the service's job", func() bool { return rec.count("from-service") == 1 })
		stop()
		select {
		case err := <-runErr:
			if err != nil {
				t.Fatalf("Run returned %v after its context ended, want nil", err)
			}
		case <-time.After(deadline):
			t.Fatal("Run did not return after its context ended")
		}
	})
}

func TestStopWaitsForRunningJobAndLeavesNoGoroutines(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		setup(t, tg.DB)
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

		rec := newRecorder()
		rec.block = make(chan struct{})
		q, err := jobs.New(tg.DB, rec.workers(), workerConfig())
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := q.Insert(t.Context(), notifyArgs{Ref: "slow"}, &river.InsertOpts{Queue: testQueue}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-rec.ran:
		case <-time.After(deadline):
			t.Fatal("job did not start")
		}

		stopped := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			stopped <- q.Stop(ctx)
		}()
		select {
		case err := <-stopped:
			t.Fatalf("Stop returned (%v) while a job was still running", err)
		case <-time.After(5 * poll):
		}
		close(rec.block)
		if err := <-stopped; err != nil {
			t.Fatalf("graceful Stop = %v", err)
		}
		done, err := q.JobsByState(t.Context(), rivertype.JobStateCompleted, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(done) != 1 {
			t.Errorf("%d completed jobs after a graceful stop, want the running one completed", len(done))
		}
	})
}

func TestStopCancelsJobsPastItsDeadline(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		setup(t, tg.DB)
		rec := newRecorder()
		rec.block = make(chan struct{}) // never closed: only cancellation ends the job
		cfg := workerConfig()
		cfg.RetryPolicy = jobs.ExponentialBackoff{Initial: time.Hour}
		q, err := jobs.New(tg.DB, rec.workers(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := q.Insert(t.Context(), notifyArgs{Ref: "stuck"}, &river.InsertOpts{Queue: testQueue}); err != nil {
			t.Fatal(err)
		}
		<-rec.ran
		ctx, cancel := context.WithTimeout(t.Context(), 3*poll)
		defer cancel()
		if err := q.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Stop past its deadline = %v, want context.DeadlineExceeded", err)
		}
		retry, err := q.JobsByState(t.Context(), rivertype.JobStateRetryable, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(retry) != 1 || len(retry[0].Errors) != 1 {
			t.Fatalf("retryable jobs %v, want the cancelled one kept with its error for a later attempt", retry)
		}
	})
}

func TestMigrateIsIdempotentAndSafeConcurrently(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for i := range errs {
			wg.Go(func() {
				db, err := storage.Open(t.Context(), tg.URL)
				if err != nil {
					errs[i] = err
					return
				}
				defer db.Close()
				errs[i] = jobs.Migrate(t.Context(), db)
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("instance %d: %v", i, err)
			}
		}
		if err := jobs.Migrate(t.Context(), tg.DB); err != nil {
			t.Fatalf("migrate again: %v", err)
		}
		if n := countRows(t, tg.DB, `SELECT count(*) FROM river_migration`); n != 6 {
			t.Errorf("river_migration holds %d versions, want River v0.34.0's 6, each once", n)
		}
	})
}

// TestMigrateKeepsOnlyTheIndexesRiverReads: river_job keeps the indexes of River's fetch,
// cleaner and unique jobs, and on PostgreSQL loses the GIN indexes on args and metadata, which
// only River's containment filters read; a second Migrate neither fails nor brings them back.
func TestMigrateKeepsOnlyTheIndexesRiverReads(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		for range 2 {
			if err := jobs.Migrate(t.Context(), tg.DB); err != nil {
				t.Fatal(err)
			}
		}
		query := `SELECT indexname FROM pg_indexes WHERE tablename = 'river_job' AND schemaname = current_schema()`
		if tg.Name == "sqlite" {
			query = `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'river_job'`
		}
		var names []string
		if err := tg.DB.NewRaw(query).Scan(t.Context(), &names); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			index string
			kept  bool
		}{
			{"river_job_kind", true},
			{"river_job_prioritized_fetching_index", true},
			{"river_job_state_and_finalized_at_index", true},
			{"river_job_unique_idx", true},
			{"river_job_args_index", false},
			{"river_job_metadata_index", false},
		} {
			if slices.Contains(names, c.index) != c.kept {
				t.Errorf("%s kept = %v, want %v (indexes: %v)", c.index, !c.kept, c.kept, names)
			}
		}
	})
}

func TestNewRejectsBadConfig(t *testing.T) {
	db := storagetest.SQLite(t).DB
	w := newRecorder().workers()
	tests := []struct {
		name    string
		workers *river.Workers
		cfg     jobs.Config
	}{
		{"queues without workers", nil, jobs.Config{Queues: map[string]int{testQueue: 1}}},
		{"queue with no worker slots", w, jobs.Config{Queues: map[string]int{testQueue: 0}}},
		{"queue name with capitals", w, jobs.Config{Queues: map[string]int{"Recharge": 1}}},
		{"negative poll interval", nil, jobs.Config{PollInterval: -time.Second}},
		{"negative max attempts", nil, jobs.Config{MaxAttempts: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := jobs.New(db, tc.workers, tc.cfg); err == nil {
				t.Error("New accepted the configuration")
			}
		})
	}
	if _, err := jobs.New(nil, nil, jobs.Config{}); err == nil {
		t.Error("New accepted a nil database")
	}
}

func TestExponentialBackoffDelay(t *testing.T) {
	tests := []struct {
		name    string
		b       jobs.ExponentialBackoff
		failure int
		want    time.Duration
	}{
		{"first failure waits Initial", jobs.ExponentialBackoff{Initial: time.Second}, 1, time.Second},
		{"doubles each failure", jobs.ExponentialBackoff{Initial: time.Second}, 4, 8 * time.Second},
		{"capped by Max", jobs.ExponentialBackoff{Initial: time.Second, Max: 5 * time.Second}, 4, 5 * time.Second},
		{"no overflow on huge counts", jobs.ExponentialBackoff{Initial: time.Second}, 500, time.Duration(math.MaxInt64)},
		{"zero Initial is one millisecond", jobs.ExponentialBackoff{}, 1, time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.b.Delay(tc.failure); got != tc.want {
				t.Errorf("Delay(%d) = %s, want %s", tc.failure, got, tc.want)
			}
		})
	}
	job := &rivertype.JobRow{Errors: []rivertype.AttemptError{{Attempt: 1}, {Attempt: 2}}}
	before := time.Now()
	next := jobs.ExponentialBackoff{Initial: time.Minute}.NextRetry(job)
	if wait := next.Sub(before); wait < 4*time.Minute || wait > 4*time.Minute+time.Second {
		t.Errorf("after a third failure NextRetry is %s away, want 4m (1m doubled twice)", wait)
	}
}

// refArgs is a job whose args hold the ref that JobsWithArg looks for, on another queue.
type refArgs struct {
	Ref   string `json:"ref"`
	Other string `json:"other"`
}

func (refArgs) Kind() string { return "ref-kind" }

// TestJobsWithArg: the jobs of one queue whose args hold a value in a member, oldest first,
// whatever their state, over several pages; a rolled-back job, another queue, another member
// or a value in another case are not listed.
func TestJobsWithArg(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		setup(t, tg.DB)
		defer jobs.SetJobListPage(2)()
		q, err := jobs.New(tg.DB, nil, jobs.Config{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		insert := func(args river.JobArgs, queue string) {
			t.Helper()
			if err := q.Insert(ctx, args, &river.InsertOpts{Queue: queue}); err != nil {
				t.Fatal(err)
			}
		}
		for range 5 {
			insert(refArgs{Ref: "r-1"}, testQueue)
		}
		insert(refArgs{Ref: "r-1"}, "other-queue")
		insert(refArgs{Ref: "r-2", Other: "r-1"}, testQueue)
		insert(refArgs{Ref: "R-1"}, testQueue)
		insertTopupWithJob(t, tg.DB, q, "r-1", false) // {"ref":"r-1"} on testQueue, rolled back

		got, err := q.JobsWithArg(ctx, testQueue, "ref", "r-1")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 {
			t.Fatalf("%d jobs, want the 5 of r-1 on %s", len(got), testQueue)
		}
		for i, j := range got {
			if j.Queue != testQueue || string(j.EncodedArgs) == "" || (i > 0 && j.ID <= got[i-1].ID) {
				t.Fatalf("job %d: %+v (want %s, oldest first)", i, j, testQueue)
			}
		}
		if got, err := q.JobsWithArg(ctx, testQueue, "ref", "nobody"); err != nil || len(got) != 0 {
			t.Fatalf("unknown value: %v, %v", got, err)
		}
		if _, err := q.JobsWithArg(ctx, testQueue, "ref') OR 1=1 --", "r-1"); err == nil {
			t.Fatal("a member that is not a plain name was accepted")
		}
	})
}

// TestArgIndexServesJobsWithArg: with WithArgIndex on a member, the statement JobsWithArg runs
// searches that index instead of reading every job; without it, nothing serves it. Migrate
// refuses a member that is not a plain name.
func TestArgIndexServesJobsWithArg(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    []jobs.MigrateOption
		indexed bool
	}{
		{"WithArgIndex", []jobs.MigrateOption{jobs.WithArgIndex("ref")}, true},
		{"no option", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
				for range 2 { // idempotent
					if err := jobs.Migrate(t.Context(), tg.DB, c.opts...); err != nil {
						t.Fatal(err)
					}
				}
				faults := &storagetest.Faults{}
				db := faults.Open(t, tg)
				q, err := jobs.New(db, nil, jobs.Config{Logger: quietLogger()})
				if err != nil {
					t.Fatal(err)
				}
				for i := range 20 {
					if err := q.Insert(t.Context(), refArgs{Ref: fmt.Sprint("r-", i)}, &river.InsertOpts{Queue: testQueue}); err != nil {
						t.Fatal(err)
					}
				}
				faults.Record()
				if got, err := q.JobsWithArg(t.Context(), testQueue, "ref", "r-7"); err != nil || len(got) != 1 {
					t.Fatalf("JobsWithArg = %d jobs, %v; want the one of r-7", len(got), err)
				}
				var list []storagetest.Statement
				for _, st := range faults.RecordedStatements() {
					if strings.Contains(st.SQL, "river_job") && (strings.Contains(st.SQL, "'ref'") || strings.Contains(st.SQL, "'$.ref'")) {
						list = append(list, st)
					}
				}
				if len(list) != 1 {
					t.Fatalf("%d statements of JobsWithArg compare the member ref, want 1: %v", len(list), list)
				}
				plan := storagetest.Explain(t, tg, list[0])
				if uses := strings.Contains(plan, "river_job_arg_ref_idx"); uses != c.indexed {
					t.Errorf("the plan of\n%s\nuses river_job_arg_ref_idx: %v, want %v:\n%s", list[0].SQL, uses, c.indexed, plan)
				}
			})
		})
	}
	t.Run("member not a plain name", func(t *testing.T) {
		db := storagetest.SQLite(t).DB
		if err := jobs.Migrate(t.Context(), db, jobs.WithArgIndex("ref') --")); err == nil {
			t.Fatal("Migrate accepted an index on a member that is not a plain name")
		}
	})
}

// routedArgs names its queue in InsertOpts, as the services' job args do, so InsertTx writes
// its rows itself after River inserted the first one.
type routedArgs struct {
	Ref string `json:"ref"`
}

func (routedArgs) Kind() string                 { return "routed" }
func (routedArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: testQueue} }

// The rows InsertTx writes itself, and on PostgreSQL the row of InsertFrom, are the rows River
// writes (same kind, queue, state, priority, attempts, args, tags, metadata but River's own
// nonce), and River works them exactly once.
func TestInsertTxOwnRowIsRiversRow(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		setup(t, tg.DB)
		var mu sync.Mutex
		runs := map[string]int{}
		w := river.NewWorkers()
		river.AddWorker(w, river.WorkFunc(func(ctx context.Context, job *river.Job[routedArgs]) error {
			mu.Lock()
			defer mu.Unlock()
			runs[job.Args.Ref]++
			return nil
		}))
		ins, err := jobs.New(tg.DB, w, jobs.Config{Logger: quietLogger(), MaxAttempts: 7})
		if err != nil {
			t.Fatal(err)
		}
		// InsertFrom has no row of its own before River inserted the kind once.
		if q, ok, err := ins.InsertFrom(routedArgs{Ref: "none"}, nil, "src", new(storage.Args)); ok || q != "" || err != nil {
			t.Fatalf("InsertFrom before River's first insert of the kind: %v, %v, %v; want not ok", q, ok, err)
		}
		refs := []string{"by-river", "own-1", "own-2"}
		for _, ref := range refs {
			err := storage.RunInTx(t.Context(), tg.DB, func(ctx context.Context, tx bun.Tx) error {
				return ins.InsertTx(ctx, tx, routedArgs{Ref: ref}, nil)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		// On PostgreSQL, the same row as part of a data-modifying WITH: once per row of its
		// source, so none when the source is empty.
		_, ok, err := ins.InsertFrom(routedArgs{Ref: "own-with"}, nil, "src", new(storage.Args))
		if err != nil || ok != (tg.Name == "postgres") {
			t.Fatalf("InsertFrom on %s: ok %v, %v", tg.Name, ok, err)
		}
		if _, ok, _ := ins.InsertFrom(routedArgs{Ref: "x"}, &river.InsertOpts{Queue: testQueue}, "src", new(storage.Args)); ok {
			t.Fatal("InsertFrom with InsertOpts: ok, want the InsertTx path")
		}
		if ok {
			for _, c := range []struct {
				ref  string
				rows int
			}{{"own-with", 1}, {"not-written", 0}} {
				var args storage.Args
				job, _, err := ins.InsertFrom(routedArgs{Ref: c.ref}, nil, "src", &args)
				if err != nil {
					t.Fatal(err)
				}
				q := "WITH src AS (SELECT 1 AS one WHERE " + args.Add(c.rows) + " > 0), j AS (" + job + ") SELECT count(*) FROM src"
				var n int
				if err := storage.ScanBound(t.Context(), tg.DB, q, args, &n); err != nil || n != c.rows {
					t.Fatalf("WITH src (%d rows), j (InsertFrom %s): %d, %v", c.rows, c.ref, n, err)
				}
			}
			refs = append(refs, "own-with")
		}
		rows, err := ins.JobsByState(t.Context(), rivertype.JobStateAvailable, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(refs) {
			t.Fatalf("%d available jobs, want %d", len(rows), len(refs))
		}
		byRef := map[string]*rivertype.JobRow{}
		for _, r := range rows {
			var a routedArgs
			if err := json.Unmarshal(r.EncodedArgs, &a); err != nil {
				t.Fatalf("args %q: %v", r.EncodedArgs, err)
			}
			byRef[a.Ref] = r
		}
		river1 := byRef["by-river"]
		for _, ref := range refs[1:] {
			own := byRef[ref]
			if own == nil {
				t.Fatalf("no job for %s", ref)
			}
			if own.Kind != river1.Kind || own.Queue != river1.Queue || own.State != river1.State || own.Priority != river1.Priority ||
				own.MaxAttempts != river1.MaxAttempts || own.Attempt != river1.Attempt || len(own.Tags) != len(river1.Tags) {
				t.Errorf("%s: kind %s queue %s state %s priority %d max %d attempt %d tags %v; River wrote %s %s %s %d %d %d %v", ref,
					own.Kind, own.Queue, own.State, own.Priority, own.MaxAttempts, own.Attempt, own.Tags,
					river1.Kind, river1.Queue, river1.State, river1.Priority, river1.MaxAttempts, river1.Attempt, river1.Tags)
			}
			if own.MaxAttempts != 7 || own.Queue != testQueue {
				t.Errorf("%s: max attempts %d queue %s, want the config's 7 and the args' %s", ref, own.MaxAttempts, own.Queue, testQueue)
			}
			var args map[string]any
			if err := json.Unmarshal(own.EncodedArgs, &args); err != nil || len(args) != 1 || args["ref"] != ref {
				t.Errorf("%s: args %s (%v), want {\"ref\": %q}", ref, own.EncodedArgs, err, ref)
			}
			var meta map[string]any
			if err := json.Unmarshal(own.Metadata, &meta); err != nil || len(meta) != 0 {
				t.Errorf("%s: metadata %s (%v), want {}", ref, own.Metadata, err)
			}
			if own.ScheduledAt.Before(river1.ScheduledAt) || own.ScheduledAt.After(time.Now().Add(time.Second)) {
				t.Errorf("%s: scheduled at %v, River's job %v, now %v", ref, own.ScheduledAt, river1.ScheduledAt, time.Now())
			}
		}

		cfg := workerConfig()
		q := startQueue(t, tg.DB, w, cfg)
		waitFor(t, "the jobs to complete", func() bool {
			done, err := q.JobsByState(t.Context(), rivertype.JobStateCompleted, 0)
			return err == nil && len(done) == len(refs)
		})
		time.Sleep(5 * poll)
		mu.Lock()
		defer mu.Unlock()
		for _, ref := range refs {
			if runs[ref] != 1 {
				t.Errorf("%s ran %d times, want 1", ref, runs[ref])
			}
		}
	})
}

// Backlog counts the unfinished jobs of a queue and dates the oldest, on both engines.
func TestBacklog(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		setup(t, tg.DB)
		rec := newRecorder()
		q, err := jobs.New(tg.DB, rec.workers(), jobs.Config{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		n, oldest, err := q.Backlog(t.Context(), testQueue)
		if err != nil || n != 0 || !oldest.IsZero() {
			t.Fatalf("empty queue: %d, %v, %v", n, oldest, err)
		}
		before := time.Now().Add(-time.Second)
		insertTopupWithJob(t, tg.DB, q, "a", true)
		insertTopupWithJob(t, tg.DB, q, "b", true)
		n, oldest, err = q.Backlog(t.Context(), testQueue)
		if err != nil || n != 2 || oldest.Before(before) || oldest.After(time.Now().Add(time.Second)) {
			t.Fatalf("two jobs: %d, oldest %v (inserted after %v), %v", n, oldest, before, err)
		}
		if n, _, err := q.Backlog(t.Context(), "other-queue"); err != nil || n != 0 {
			t.Fatalf("other queue: %d, %v", n, err)
		}
	})
}

// A Queue built before Migrate (its SQLite insert could not be prepared yet) still writes its
// own rows, with the statement unprepared.
func TestQueueBuiltBeforeMigrateInserts(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		q, err := jobs.New(tg.DB, nil, jobs.Config{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		setup(t, tg.DB)
		for _, ref := range []string{"a", "b", "c"} { // the first through River, the others as own rows
			err := tg.DB.RunInTx(t.Context(), nil, func(ctx context.Context, tx bun.Tx) error {
				return q.InsertTx(ctx, tx, routedArgs{Ref: ref}, nil)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if n := countRows(t, tg.DB, `SELECT count(*) FROM river_job WHERE kind = 'routed' AND state = 'available'`); n != 3 {
			t.Fatalf("%d jobs, want 3", n)
		}
	})
}
