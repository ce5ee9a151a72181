// Package jobs is the services' background job queue: River (github.com/riverqueue/river
// v0.34.0) on the service's own database, PostgreSQL or SQLite, so that a job is enqueued in
// the same transaction as the state change it announces.
//
// # Setup
//
// Run [Migrate] at start (and from the service's migrate command) after storage.Open: it
// applies River's own migrations with River's migrator for the engine (riverdatabasesql for
// PostgreSQL through pgx's stdlib, riversqlite for SQLite). On PostgreSQL the tables land in
// the schema that search_path selects; River's queries are unqualified (its Schema option is
// left empty), so a DATABASE_URL with search_path=... works as it does for bun.
//
// Then build one [Queue] per process with [New]:
//
//	workers := river.NewWorkers()
//	river.AddWorker(workers, &notifySuccessWorker{...}) // Kind() "recharge-success", ...
//	q, err := jobs.New(db, workers, jobs.Config{
//		Queues: map[string]int{"recharge-notifications": 5}, // queue -> concurrent jobs
//		Logger: logger,
//	})
//
// Job kinds may contain hyphens ("recharge-invalid-invoice"). A job goes to the queue named in
// its InsertOpts (or its args' InsertOpts method); otherwise to River's "default" queue, which
// a process only works if Config.Queues lists it.
//
// # Enqueueing
//
// Inside the bun transaction that changes the state:
//
//	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
//		// UPDATE ... WHERE id = ? AND estado = ?
//		return q.InsertTx(ctx, tx, NotifySuccess{ID: id}, &river.InsertOpts{Queue: "recharge-notifications"})
//	})
//
// If the transaction rolls back the job never existed; if it commits the job is worked once.
// On SQLite never call [Queue.Insert] (or anything else outside tx) while holding a
// transaction: the transaction holds SQLite's only write lock, so the second write waits
// busy_timeout (10 s) and fails with SQLITE_BUSY. Committed jobs are picked up at the next
// poll (Config.PollInterval, default 1 s): neither driver can LISTEN, so River runs in
// poll-only mode.
//
// # Working: in the service or as its own process
//
// In-process: [Queue.Start] after the HTTP server is set up, [Queue.Stop] with the shutdown
// deadline on SIGTERM. Start ignores its context's cancellation; only Stop stops. Stop stops
// fetching, lets running jobs finish, and if its context ends first, cancels their contexts
// and waits up to 5 s more for them to return; a job cut off that way is recorded as a failed
// attempt and retried later.
//
// Separate worker process: the service builds an insert-only Queue, New(db, nil, Config{})
// (no Queues: Start returns [ErrInsertOnly]), and a second binary, or the same binary with a
// worker flag, opens the same DATABASE_URL and runs
//
//	q, _ := jobs.New(db, workers, jobs.Config{Queues: map[string]int{"recharge-notifications": 5}})
//	err := q.Run(signalCtx, 30*time.Second) // Start, wait for SIGTERM, Stop
//
// Any number of worker processes may run against one database: River hands each job to one of
// them, and elects one leader for maintenance (scheduling retries, cleaning old jobs, rescuing
// jobs of a crashed worker). That works on SQLite too, between processes on one host sharing
// the file (tested with two connection pools on one file).
//
// # Retries and failures
//
// A worker returning an error (or panicking, or outliving Config.JobTimeout, default 1 min)
// fails that attempt. The job is retried per Config.RetryPolicy: River's default is
// attempt^4 seconds with 10 % jitter (1 s, 16 s, 81 s, 4 min, ...); [ExponentialBackoff] is a
// plain doubling alternative with a cap; a worker's own NextRetry method overrides both. After
// Config.MaxAttempts attempts (default 25) the job is discarded: it stays in river_job with
// state "discarded" and the error of every attempt in its errors column (kept 7 days, River's
// DiscardedJobRetentionPeriod), so nothing is lost silently. Every failed attempt is logged at
// Warn and the last one at Error, without the job's args. [Queue.JobsByState] lists jobs in a
// state for an operator or a test, e.g. rivertype.JobStateDiscarded; [Queue.JobsWithArg] lists
// the jobs of a queue whose args name one thing (a transaction's notifications), with River's
// JobList and a predicate in the engine's SQL, so that no other package queries River's tables;
// Migrate with [WithArgIndex] on that member indexes it, without which each call reads every
// job River holds (topup's BenchmarkNotifications measures both). A job whose worker process
// died mid-run is returned to the queue by the leader after one hour
// (River's RescueStuckJobsAfter). Completed jobs are deleted after 24 h.
//
// Workers must be idempotent where it matters: a job runs at least once, and runs again if its
// attempt is cut off (process killed, Stop past its deadline, rescued after an hour) after the
// work was done but before River recorded the completion.
//
// # Errors
//
// New fails on invalid configuration (queues without workers, a queue with fewer than one
// worker, a queue name River rejects, negative durations). Insert and InsertTx wrap River's
// error with the job kind; inserting a kind that has no worker in a non-nil workers bundle is
// an error. Start returns [ErrInsertOnly] on an insert-only Queue.
//
// # Insert cost
//
// InsertTx writes a job whose args set at most Queue, MaxAttempts and Priority (every job of
// the services) as one short INSERT of the columns River's JobInsertFast sets, the rest left to
// the table's defaults. River's own insert path cost a fifth of a webhook's CPU on SQLite (a
// savepoint, and a long upsert with unique-job clauses that modernc's driver parses again on
// every call, returning the whole row) and an array-encoded batch statement on PostgreSQL.
// The first job of each kind in a process, and any job with other options, still goes through
// River's InsertTx, which checks the kind, its worker and its queue. On PostgreSQL,
// [Queue.InsertFrom] gives the same row as an INSERT ... SELECT for a caller's data-modifying
// WITH (the job written only when the statement's update matched, one round trip); it answers
// not ok wherever InsertTx would not write the row itself, and the caller then uses InsertTx.
// On SQLite that INSERT is prepared once, by New (it needs the migrated table; a Queue built
// before Migrate executes it unprepared): compiling it, with river_job's constraints and
// indexes, cost twice its execution (BenchmarkInsertTx, 135 to 45 us per job; modernc.org/sqlite
// keeps a prepared statement compiled since v1.46, before that it compiled it again on every
// execution).
// The test TestInsertTxOwnRowIsRiversRow compares the rows of these paths and has River work
// them, so a River upgrade that changes its table fails there.
//
// On PostgreSQL, [Migrate] drops the GIN indexes River creates on river_job's args and
// metadata. Only a JobList filtered by containment (@>) could read them, which nothing in this
// module runs ([Queue.JobsWithArg] compares one member with ->>, which they do not serve), and
// every job insert wrote an entry for each member of both: in a profile of the
// PostgreSQL backends under the top-up webhook at c=8, GIN inserts were 8 % of their CPU.
// BenchmarkInsertTx on PostgreSQL went from 60-61 to 51-55 us per job (BENCHMARKS.md has the
// webhook beside the floor). River's down migrations drop river_job whole, so they do not miss
// them; a River upgrade that names them must be read with this in mind. The index of
// [WithArgIndex] costs each insert one more entry: BenchmarkInsertTx on SQLite 32-42 to 44-53
// us per job (the member read out of the args' JSON), on PostgreSQL within the noise. Migrate
// builds it with a plain CREATE INDEX, which holds inserts into river_job while it reads the
// table (a day's jobs) the first time.
//
// # Decision record
//
//   - River, as the design chose, met every requirement on both engines, so the outbox
//     fallback of the design was not built. Verified by this package's tests on SQLite and
//     PostgreSQL: rolled-back inserts never run, committed ones run exactly once (also under
//     30 concurrent transactions), failing jobs are retried with backoff and end discarded
//     with their errors, Stop drains and leaks no goroutine.
//   - One River client type, river.Client[*sql.Tx], for both engines: riverdatabasesql and
//     riversqlite both work on *sql.Tx, and bun.Tx carries the *sql.Tx, so InsertTx joins the
//     caller's transaction with no driver-specific code in callers.
//   - SQLite: storage.Open keeps one connection per SQLite pool, as River's driver
//     documentation suggests; each transaction takes the write lock at BEGIN (_txlock=immediate).
//     River shares the *sql.DB with bun; there is no separate pool.
//   - Migrations: River's migrator reads the applied versions outside the transaction of each
//     version, so two instances starting together could both apply version 1. On PostgreSQL
//     Migrate holds a session advisory lock keyed by the current schema; on SQLite it runs
//     River's migrations in one BEGIN IMMEDIATE transaction (River's MigrateTx, deprecated only
//     because some PostgreSQL versions need their own transaction).
//   - River's tables are River's, created by River's migrator, not by the services' bun
//     migrations, so upgrading River upgrades its schema with its own tested SQL.
//   - River logs job failures at Info; an ErrorHandler raises them to Warn/Error so that a
//     notification that keeps failing shows up under a production log level.
//   - Start detaches from its context's cancellation: River treats a cancelled start context as
//     a hard stop that cuts running jobs off, which a signal context would trigger before the
//     graceful Stop.
//   - Defaults are River's (MaxAttempts 25, JobTimeout 1 min, poll 1 s, fetch cooldown 100 ms);
//     tests use 50 ms polls and a 100 ms ExponentialBackoff.
package jobs
