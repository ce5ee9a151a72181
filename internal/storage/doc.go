// Package storage opens the services' database with bun and runs their migrations.
//
// Two engines are supported with one set of migrations:
//
//   - PostgreSQL (production): a DATABASE_URL starting with postgres:// or postgresql://,
//     opened through pgx's database/sql driver (jackc/pgx/v5/stdlib) with bun's pgdialect.
//   - SQLite (embedded default): any other value (a path, "sqlite:path" or "file:path"), opened
//     with the pure-Go driver modernc.org/sqlite and bun's sqlitedialect, so a machine with
//     nothing installed can run the services.
//
// SQLite is always opened with journal_mode(WAL), synchronous(FULL), busy_timeout(10000),
// foreign_keys(1), temp_store(MEMORY) and _txlock=immediate: FULL syncs every commit to disk
// before it returns, so an answered record survives a power cut; without the others concurrent
// writers get SQLITE_BUSY, and a compare-and-set (UPDATE ... WHERE id = ? AND estado = ?) can end
// with no winner at all. temp_store(MEMORY) keeps SQLite's statement and savepoint journals (the
// copies of the pages that a statement or a group commit's savepoint may roll back, never read
// after a crash) in memory in 1 KiB pieces; by default each piece is 64 KiB and a journal past
// that spills to a temporary file. With the allocator behind modernc.org/sqlite mapping and
// unmapping memory for such pieces, the two were a tenth of the SQLite webhook's CPU; go.mod
// also requires modernc.org/memory v1.12.1, which keeps freed regions for reuse (v1.11.0, which
// sqlite v1.46.1 names, unmapped each region as soon as it was empty). Temporary tables and large
// sorts stay in memory too, which the services' queries (lists read a page at a time) come
// nowhere near.
//
// SQLite has no SELECT ... FOR UPDATE, stores DECIMAL columns with NUMERIC affinity (money
// arithmetic therefore stays in Go with shopspring/decimal) and compares timestamps as text, so
// callers always bind time.Time values in UTC and never compare against SQL expressions such as
// now().
//
// Open owns the pool: PostgreSQL keeps [DefaultMaxConns] connections open ([WithMaxConns],
// DATABASE_MAX_CONNS); SQLite exactly one writer connection (and [Reader]'s read-only ones),
// since SQLite has one writer at a time and queueing in Go avoids the busy handler's sleeps. A store therefore does all the work of a transaction on
// the transaction, never on the pool while it holds one. The reads that grow with the data (a
// list's page and count, a search, the counts of /metrics) go through [Reader], so that on SQLite
// a dashboard's page does not hold a top-up's or an authorization's commit back.
//
// Stores run their transactions with [RunInTx] (and single-statement writes with [Write]). On
// SQLite that is a group commit: the transactions waiting for the one connection run one after
// another in a single transaction, each in a savepoint, and share one fsync; each caller still
// gets its own outcome and returns only once its work is on disk. On PostgreSQL it is
// bun's RunInTx, and Write runs its statement without BEGIN and COMMIT.
//
// bun writes argument values into the SQL text, so every statement is new to the driver. On
// PostgreSQL such statements (no arguments) go over the simple protocol, one round trip: pgx's
// default prepared-statement cache cost a Parse round trip per statement and churned the cache.
// Statements with arguments are kept prepared: pgx prepares each once per connection, and on
// SQLite, where compiling a statement costs more than running it, the connection keeps each
// statement that arrives with arguments compiled, keyed by its text, up to 256 (a second use
// while the first one's rows are open runs uncached). The writes and reads on a request's path
// are therefore bound statements on both engines (River's, and the stores' through
// [BoundInsert], [InsertBoundID], [BoundInsertFrom], [BoundSet], [Snapshot.BoundUpdate] and
// [SelectBound], which write the row bun would write with numbered parameters, run by
// [ScanBound] and [ExecBound]): planning bun's literal statements was half of PostgreSQL's CPU
// for an authorization, and compiling them a tenth of the services' CPU on SQLite. An UPDATE of
// a record writes only the columns that changed since it was read ([Snapshot]); on PostgreSQL a
// store may run that compare-and-set ([Snapshot.BoundUpdate]) with the inserts that depend on it
// ([BoundInsertFrom]) as one data-modifying WITH, atomic without BEGIN and COMMIT, read with
// [ScanBound] (which, unlike bun's Scan, returns an error that arrives after the row, such as
// one raised at commit, as [ScanOne] does for a bun query).
//
// Migrations are bun/migrate collections built with [NewMigrations]. Each service keeps its own
// bookkeeping table (for example "credit_migrations"), so two services can share one PostgreSQL
// database. DDL is written once with the tokens of [DDL] ($ID, $JSON, $TIMESTAMP, $DECIMAL)
// which expand to the right type on each engine.
//
// [IsUniqueViolation] recognises a unique-constraint violation on both engines (PostgreSQL
// SQLSTATE 23505, SQLite extended codes 2067 and 1555); a store tells which constraint was
// violated with [Unique.Violated] (PostgreSQL's constraint name, SQLite's column list).
//
// Package storagetest runs one test body against SQLite and, when TEST_DATABASE_URL is set,
// PostgreSQL (each test in a schema of its own); REQUIRE_POSTGRES=1 turns a missing
// TEST_DATABASE_URL into a failure.
package storage
