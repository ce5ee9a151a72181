package jobs

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
)

// Defaults applied by New for zero Config fields.
const (
	DefaultPollInterval  = time.Second
	DefaultFetchCooldown = 100 * time.Millisecond
	DefaultMaxAttempts   = 25
	DefaultJobTimeout    = time.Minute
)

// hardStopGrace bounds how long Stop waits for cancelled jobs to return after its own context
// ended, so a worker that ignores its context cannot hang a shutdown forever.
const hardStopGrace = 5 * time.Second

// ErrInsertOnly is returned by Start and Run on a Queue built without queues to work.
var ErrInsertOnly = errors.New("jobs: insert-only queue (no Config.Queues) cannot work jobs")

// Config configures a Queue. The zero value is an insert-only queue with River's defaults.
type Config struct {
	// Queues maps each queue this process works to its maximum number of concurrent jobs, e.g.
	// {"recharge-notifications": 5}. Empty means insert-only: Insert and InsertTx work, Start
	// does not. Queue names are lower case letters, digits, '-' and '_'.
	Queues map[string]int
	// PollInterval is how often an idle worker looks for new jobs. Neither driver in use has
	// LISTEN/NOTIFY, so a job committed by another process waits up to this long. Default 1 s.
	PollInterval time.Duration
	// FetchCooldown is the minimum time between two fetches. Default 100 ms, never more than
	// PollInterval.
	FetchCooldown time.Duration
	// MaxAttempts is how many times a job runs before it is discarded, unless the job's args or
	// InsertOpts say otherwise. Default 25.
	MaxAttempts int
	// RetryPolicy decides when a failed job runs again. Default: River's, attempt^4 seconds
	// with 10 % jitter (1 s, 16 s, 81 s, ...). A worker's own NextRetry method wins over it.
	RetryPolicy river.ClientRetryPolicy
	// JobTimeout cancels a job's context after this long. Default 1 minute.
	JobTimeout time.Duration
	// Logger receives River's logs, and every failed attempt at Warn (the last at Error).
	// Default slog.Default().
	Logger *slog.Logger
}

// Queue is a River client bound to the service's database. It is safe for concurrent use.
type Queue struct {
	db          *bun.DB
	client      *river.Client[*sql.Tx]
	working     bool
	postgres    bool
	maxAttempts int
	// checked holds the kinds River itself has inserted once (InsertTx).
	checked sync.Map
	// sqliteStmt is sqliteInsert prepared once (nil if the table was missing when New ran):
	// compiling it cost more than running it.
	sqliteStmt *sql.Stmt
}

// New builds a Queue on db, which must be the *bun.DB returned by storage.Open (PostgreSQL or
// SQLite) with Migrate already applied.
//
// workers holds the workers this process can run (river.AddWorker). With cfg.Queues empty the
// Queue is insert-only and workers may be nil; when workers is given anyway, inserting a job
// kind that has no worker in it is an error, which catches a forgotten registration early.
func New(db *bun.DB, workers *river.Workers, cfg Config) (*Queue, error) {
	if db == nil {
		return nil, errors.New("jobs: nil database")
	}
	if len(cfg.Queues) > 0 && workers == nil {
		return nil, errors.New("jobs: Config.Queues given without workers")
	}
	if cfg.PollInterval < 0 || cfg.FetchCooldown < 0 || cfg.MaxAttempts < 0 || cfg.JobTimeout < 0 {
		return nil, errors.New("jobs: negative PollInterval, FetchCooldown, MaxAttempts or JobTimeout")
	}
	poll := cmp.Or(cfg.PollInterval, DefaultPollInterval)
	cooldown := min(cmp.Or(cfg.FetchCooldown, DefaultFetchCooldown), poll)
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	rc := &river.Config{
		ErrorHandler:      errorLogger{logger},
		FetchCooldown:     cooldown,
		FetchPollInterval: poll,
		JobTimeout:        cmp.Or(cfg.JobTimeout, DefaultJobTimeout),
		Logger:            logger,
		MaxAttempts:       cmp.Or(cfg.MaxAttempts, DefaultMaxAttempts),
		RetryPolicy:       cfg.RetryPolicy,
		Workers:           workers,
	}
	if len(cfg.Queues) > 0 {
		rc.Queues = make(map[string]river.QueueConfig, len(cfg.Queues))
		for name, n := range cfg.Queues {
			if n < 1 {
				return nil, fmt.Errorf("jobs: queue %q needs at least one worker, got %d", name, n)
			}
			rc.Queues[name] = river.QueueConfig{MaxWorkers: n}
		}
	}
	client, err := river.NewClient(driver(db), rc)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	q := &Queue{db: db, client: client, working: len(cfg.Queues) > 0, postgres: storage.IsPostgres(db), maxAttempts: rc.MaxAttempts}
	if !q.postgres {
		// Prepared here, before any transaction of this caller holds SQLite's one connection,
		// and kept as long as db; a database not migrated yet (or a connection held elsewhere
		// past the wait) keeps the unprepared statement.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if stmt, err := db.DB.PrepareContext(ctx, sqliteInsert); err == nil {
			q.sqliteStmt = stmt
		}
		cancel()
	}
	return q, nil
}

// driver picks River's database/sql driver for the engine behind db. Both take *sql.Tx, which
// is what lets InsertTx join the caller's bun transaction on either engine.
func driver(db *bun.DB) riverdriver.Driver[*sql.Tx] {
	if storage.IsPostgres(db) {
		return riverdatabasesql.New(db.DB)
	}
	return riversqlite.New(db.DB)
}

// InsertTx enqueues a job inside tx: it becomes visible to workers when tx commits and
// disappears with it when tx rolls back. Route it to a queue with opts.Queue (or the args'
// InsertOpts method); opts may be nil.
//
// Workers notice it at their next poll (Config.PollInterval), since a commit cannot be
// announced from here.
//
// With opts nil, and args whose InsertOpts set at most Queue, MaxAttempts and Priority, the job
// is one short INSERT of the row River's own insert writes (see the package documentation,
// "Insert cost"); the first job of each kind goes through River's InsertTx, which checks the
// kind, its worker and its queue.
func (q *Queue) InsertTx(ctx context.Context, tx bun.Tx, args river.JobArgs, opts *river.InsertOpts) error {
	if tx.Tx == nil {
		return errors.New("jobs: InsertTx outside a transaction")
	}
	if o, plain := q.plainOpts(args, opts); plain {
		if _, seen := q.checked.Load(args.Kind()); seen {
			return q.insertRow(ctx, tx, args, o)
		}
	}
	if _, err := q.client.InsertTx(ctx, tx.Tx, args, opts); err != nil {
		return fmt.Errorf("jobs: insert %s: %w", args.Kind(), err)
	}
	q.checked.Store(args.Kind(), true)
	return nil
}

// plainOpts resolves the insert options of args as River does, and reports whether they need
// nothing but the columns insertRow writes.
func (q *Queue) plainOpts(args river.JobArgs, opts *river.InsertOpts) (river.InsertOpts, bool) {
	var o river.InsertOpts
	if a, ok := args.(river.JobArgsWithInsertOpts); ok {
		o = a.InsertOpts()
	}
	if opts != nil || !o.ScheduledAt.IsZero() || len(o.Tags) > 0 || len(o.Metadata) > 0 || o.Pending ||
		!reflect.ValueOf(o.UniqueOpts).IsZero() {
		return o, false
	}
	o.Queue = cmp.Or(o.Queue, river.QueueDefault)
	o.MaxAttempts = cmp.Or(o.MaxAttempts, q.maxAttempts)
	o.Priority = cmp.Or(o.Priority, 1)
	return o, true
}

// insertRow writes the job's row: the columns River's JobInsertFast sets for a job without
// unique key, schedule, tags or metadata, the rest left to the table's defaults.
func (q *Queue) insertRow(ctx context.Context, tx bun.Tx, args river.JobArgs, o river.InsertOpts) error {
	values, err := q.rowValues(args, o)
	if err != nil {
		return err
	}
	if q.postgres {
		// Arguments bound, not written into the text: pgx prepares the statement once per
		// connection, and PostgreSQL does not parse and plan it again for every job.
		_, err = tx.Tx.ExecContext(ctx, pgInsertBound, values...)
	} else if q.sqliteStmt != nil {
		// The statement prepared on the connection the transaction holds (database/sql reuses it
		// there): SQLite compiles the INSERT, with river_job's constraints and indexes, once.
		_, err = tx.Tx.StmtContext(ctx, q.sqliteStmt).ExecContext(ctx, values...)
	} else {
		_, err = tx.Tx.ExecContext(ctx, sqliteInsert, values...)
	}
	if err != nil {
		return fmt.Errorf("jobs: insert %s: %w", args.Kind(), err)
	}
	return nil
}

// sqliteInsert is insertRow's statement on SQLite, as River's SQLite driver writes the row: args a
// BLOB of JSON text, times from datetime('now', 'subsec').
const sqliteInsert = `INSERT INTO river_job (args, created_at, kind, max_attempts, priority, queue, scheduled_at, state)
	VALUES (?, datetime('now', 'subsec'), ?, ?, ?, ?, datetime('now', 'subsec'), 'available')`

// rowValues are the values of a job's row, in the order of the placeholders of insertRow's
// statements and pgRowValues: the encoded args (JSON text on PostgreSQL, cast to jsonb by the
// statement; on SQLite a BLOB, as River's driver writes them), kind, max_attempts, priority,
// queue.
func (q *Queue) rowValues(args river.JobArgs, o river.InsertOpts) ([]any, error) {
	encoded, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("jobs: insert %s: encode args: %w", args.Kind(), err)
	}
	var a any = encoded
	if q.postgres {
		a = string(encoded)
	}
	return []any{a, args.Kind(), o.MaxAttempts, o.Priority, o.Queue}, nil
}

// The job's row on PostgreSQL, for insertRow and InsertFrom: its columns and their values, one
// '?' for each of rowValues (args as JSON text cast to jsonb), the rest left to the table's
// defaults.
const (
	pgRowColumns = `args, kind, max_attempts, priority, queue, state`
	pgRowValues  = `CAST(? AS jsonb), ?, ?, ?, ?, 'available'`
)

// pgInsertBound is insertRow's statement on PostgreSQL, with pgx's $n placeholders.
var pgInsertBound = func() string {
	var b strings.Builder
	n := 0
	for _, r := range pgRowValues {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return `INSERT INTO river_job (` + pgRowColumns + `) VALUES (` + b.String() + `)`
}()

// InsertFrom is, on PostgreSQL, the INSERT of args' job row that InsertTx would write itself,
// taking its values once for each row of from (a table or WITH name of the statement it is part
// of), for a data-modifying WITH: with from an UPDATE ... RETURNING, the job exists only when the
// update matched, in one statement without BEGIN and COMMIT. It is written with numbered
// parameters, its values appended to a (a bound statement, storage.ScanBound). ok is false, and
// query empty, where InsertTx would not write the row itself: on SQLite, for options beyond
// Queue, MaxAttempts and Priority (opts is InsertTx's), and for the first job of its kind in this
// process, which River's InsertTx checks; the caller then uses InsertTx in a transaction.
func (q *Queue) InsertFrom(args river.JobArgs, opts *river.InsertOpts, from string, a *storage.Args) (query string, ok bool, err error) {
	if !q.postgres {
		return "", false, nil
	}
	o, plain := q.plainOpts(args, opts)
	if !plain {
		return "", false, nil
	}
	if _, seen := q.checked.Load(args.Kind()); !seen {
		return "", false, nil
	}
	values, err := q.rowValues(args, o)
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	i := 0
	for _, r := range pgRowValues {
		if r == '?' {
			b.WriteString(a.Add(values[i]))
			i++
			continue
		}
		b.WriteRune(r)
	}
	return `INSERT INTO river_job (` + pgRowColumns + `) SELECT ` + b.String() + ` FROM ` + from, true, nil
}

// Backlog counts the jobs of queue that are not finished (available, scheduled, retryable,
// running or pending) and returns when the oldest of them was created (zero when none).
func (q *Queue) Backlog(ctx context.Context, queue string) (n int, oldest time.Time, err error) {
	const query = `SELECT count(*), min(created_at) FROM river_job
		WHERE queue = ? AND state IN ('available', 'scheduled', 'retryable', 'running', 'pending')`
	if q.postgres {
		var min sql.NullTime
		err = q.db.QueryRowContext(ctx, query, queue).Scan(&n, &min)
		return n, min.Time, wrapBacklog(queue, err)
	}
	// SQLite keeps River's times as text, e.g. "2026-11-25 19:20:00.123".
	var min sql.NullString
	if err = q.db.QueryRowContext(ctx, query, queue).Scan(&n, &min); err != nil || !min.Valid {
		return n, time.Time{}, wrapBacklog(queue, err)
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", time.RFC3339Nano} {
		if t, perr := time.Parse(layout, min.String); perr == nil {
			return n, t, nil
		}
	}
	return n, time.Time{}, fmt.Errorf("jobs: backlog of %s: unreadable time %q", queue, min.String)
}

func wrapBacklog(queue string, err error) error {
	if err != nil {
		return fmt.Errorf("jobs: backlog of %s: %w", queue, err)
	}
	return nil
}

// Insert enqueues a job in a transaction of its own. Use InsertTx when the job announces a
// state change, so that neither can exist without the other.
func (q *Queue) Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error {
	if _, err := q.client.Insert(ctx, args, opts); err != nil {
		return fmt.Errorf("jobs: insert %s: %w", args.Kind(), err)
	}
	return nil
}

// Start begins working the configured queues in background goroutines and returns. Only Stop
// stops them: ctx's values are kept but its cancellation is ignored, so that a signal context
// passed here cannot cut jobs off before Stop gets its chance to drain them.
func (q *Queue) Start(ctx context.Context) error {
	if !q.working {
		return ErrInsertOnly
	}
	if err := q.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("jobs: start: %w", err)
	}
	return nil
}

// Stop stops fetching new jobs and waits for running jobs to finish. If ctx ends first, the
// running jobs' contexts are cancelled and Stop waits a few more seconds for them to return,
// then returns ctx's error. Stop on a Queue that is not working returns nil.
func (q *Queue) Stop(ctx context.Context) error {
	if !q.working {
		return nil
	}
	err := q.client.Stop(ctx)
	if err == nil || ctx.Err() == nil {
		return err
	}
	hardCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hardStopGrace)
	defer cancel()
	if hardErr := q.client.StopAndCancel(hardCtx); hardErr != nil {
		return fmt.Errorf("jobs: stop: jobs still running after cancellation: %w", errors.Join(err, hardErr))
	}
	return fmt.Errorf("jobs: stop: running jobs cancelled: %w", err)
}

// Run works the queues until ctx ends, then stops, giving running jobs up to shutdownTimeout
// to finish. It is the whole body of a worker process (see the package documentation).
func (q *Queue) Run(ctx context.Context, shutdownTimeout time.Duration) error {
	if err := q.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	return q.Stop(stopCtx)
}

// JobsByState lists up to limit jobs (100 when limit <= 0) in state, most recently created
// first. JobsByState(ctx, rivertype.JobStateDiscarded, 0) shows the jobs that gave up, each
// with the error of every attempt in its Errors field.
func (q *Queue) JobsByState(ctx context.Context, state rivertype.JobState, limit int) ([]*rivertype.JobRow, error) {
	if limit <= 0 {
		limit = 100
	}
	params := river.NewJobListParams().
		States(state).
		First(limit).
		OrderBy(river.JobListOrderByID, river.SortOrderDesc)
	res, err := q.client.JobList(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("jobs: list %s jobs: %w", state, err)
	}
	return res.Jobs, nil
}

// argMember is what JobsWithArg and WithArgIndex take as a member name: it is written into
// their SQL, so only plain names.
var argMember = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// argExpr is the value of args' member in the engine's own SQL: jsonb's ->> on PostgreSQL; on
// SQLite args is a BLOB of JSON text, read through json_extract. The member is written in, not
// bound, so that the index of WithArgIndex serves the query.
func argExpr(postgres bool, member string) string {
	if postgres {
		return "args ->> '" + member + "'"
	}
	return "json_extract(CAST(args AS TEXT), '$." + member + "')"
}

// jobListPage is how many jobs one JobList query of JobsWithArg reads (a variable so that a
// test can page with fewer jobs).
var jobListPage = 1000

// JobsWithArg lists the jobs of queue whose args hold the string value in their top-level
// member named member, oldest first, in every state River still keeps them in (completed jobs
// 24 h, discarded ones 7 days), e.g. JobsWithArg(ctx, "recharge-notifications",
// "transaction_id", id). member is a plain name (letters, digits, '_') of a string member.
// Without the index of WithArgIndex on member it reads every job of the table.
func (q *Queue) JobsWithArg(ctx context.Context, queue, member, value string) ([]*rivertype.JobRow, error) {
	if !argMember.MatchString(member) {
		return nil, fmt.Errorf("jobs: list by arg: member %q is not a plain name", member)
	}
	where := argExpr(q.postgres, member) + " = @arg_value"
	first := river.NewJobListParams().Queues(queue).Where(where, river.NamedArgs{"arg_value": value}).
		OrderBy(river.JobListOrderByID, river.SortOrderAsc).First(jobListPage)
	params := first
	var out []*rivertype.JobRow
	for {
		res, err := q.client.JobList(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("jobs: list %s jobs by %s: %w", queue, member, err)
		}
		out = append(out, res.Jobs...)
		if len(res.Jobs) < jobListPage {
			return out, nil
		}
		// From the first page's params each time: River adds the cursor's predicate to the
		// params it is given, so params chained page after page would carry it twice.
		params = first.After(res.LastCursor)
	}
}

// Client returns the underlying River client, for what this package does not wrap (job
// cancellation, subscriptions, queue pausing).
func (q *Queue) Client() *river.Client[*sql.Tx] { return q.client }
