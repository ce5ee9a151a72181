package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqlitePragmas are required for correct concurrent writes; see the package documentation.
// busy_timeout is 10 s, or the statement timeout (WithStatementTimeout): SQLite waits for another
// process's write lock in a busy handler that no context cancels.
// synchronous(FULL): in WAL mode every commit is synced to disk before it returns, so a record
// that was answered survives a power cut (NORMAL would only survive a crash of the process).
// temp_store(MEMORY): see the package documentation.
const sqlitePragmas = "_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)&_pragma=temp_store(MEMORY)&_txlock=immediate"

// DefaultMaxConns is the PostgreSQL pool size when WithMaxConns is not given.
const DefaultMaxConns = 16

// Option configures Open.
type Option func(*openOptions)

type openOptions struct {
	wrap             func(driver.Connector) driver.Connector
	statementTimeout time.Duration
	maxConns         int
	noReaders        bool // OpenHealth: one connection, no Reader
}

// WithMaxConns sets the PostgreSQL pool size (DATABASE_MAX_CONNS); 0 means DefaultMaxConns.
// SQLite always has one writer connection, and ReadConns for Reader.
func WithMaxConns(n int) Option {
	return func(o *openOptions) { o.maxConns = n }
}

// WithStatementTimeout bounds every statement and every wait for a lock: on PostgreSQL
// statement_timeout and lock_timeout of each connection, on SQLite the busy timeout. A table
// locked for longer fails the statements that wait on it instead of holding the pool's
// connections. Migrations lift it on PostgreSQL.
func WithStatementTimeout(d time.Duration) Option {
	return func(o *openOptions) { o.statementTimeout = d }
}

// WithConnector wraps the database driver's connector: tests inject faults with it
// (storagetest.Faults).
func WithConnector(wrap func(driver.Connector) driver.Connector) Option {
	return func(o *openOptions) { o.wrap = wrap }
}

// sqliteDriver is the driver modernc.org/sqlite registered as "sqlite".
var sqliteDriver = func() driver.Driver {
	db, _ := sql.Open("sqlite", "") // opens nothing: sql.Open only finds the driver
	defer db.Close()
	return db.Driver()
}()

// sqliteConnector opens SQLite connections for sql.OpenDB.
type sqliteConnector struct{ dsn string }

func (c sqliteConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := sqliteDriver.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return newStmtCacheConn(conn), nil
}
func (c sqliteConnector) Driver() driver.Driver { return sqliteDriver }

// Open opens the database named by databaseURL and checks that it answers.
//
// A postgres:// or postgresql:// URL opens PostgreSQL; any other "scheme://" URL is refused;
// anything else is taken as a SQLite file path (optionally prefixed with "sqlite:" or "file:",
// query parameters kept), whose directory is created when missing.
func Open(ctx context.Context, databaseURL string, opts ...Option) (*bun.DB, error) {
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	wrap := func(c driver.Connector) driver.Connector { return c }
	if o.wrap != nil {
		wrap = o.wrap
	}
	if databaseURL == "" {
		return nil, errors.New("storage: empty database URL")
	}
	if err := CheckURL(databaseURL); err != nil {
		return nil, err
	}
	var db *bun.DB
	if IsPostgresURL(databaseURL) {
		cfg, err := pgconnConfig(databaseURL)
		if err != nil {
			return nil, err
		}
		if ms := o.statementTimeout.Milliseconds(); ms > 0 {
			cfg.RuntimeParams["statement_timeout"] = strconv.FormatInt(ms, 10)
			cfg.RuntimeParams["lock_timeout"] = strconv.FormatInt(ms, 10)
		}
		sqldb := sql.OpenDB(wrap(simpleArgless{stdlib.GetConnector(*cfg)}))
		n := o.maxConns
		if n <= 0 {
			n = DefaultMaxConns
		}
		// Every connection stays open: a pool that closes idle ones reconnects (TLS, auth,
		// pgx's statement cache lost) in the middle of a burst.
		sqldb.SetMaxOpenConns(n)
		sqldb.SetMaxIdleConns(n)
		sqldb.SetConnMaxIdleTime(5 * time.Minute)
		db = bun.NewDB(sqldb, pgdialect.New())
	} else {
		dsn, err := sqliteDSN(databaseURL, o.statementTimeout)
		if err != nil {
			return nil, err
		}
		connector := wrap(sqliteConnector{dsn: dsn})
		var reader *bun.DB
		if !o.noReaders && readersFit(dsn) {
			// query_only refuses writes; deferred: a transaction on it never asks for the write lock.
			rdsn := strings.Replace(dsn, "_txlock=immediate", "_txlock=deferred", 1) + "&_pragma=query_only(1)"
			rdb := sql.OpenDB(wrap(sqliteConnector{dsn: rdsn}))
			rdb.SetMaxOpenConns(ReadConns)
			rdb.SetMaxIdleConns(ReadConns)
			reader = bun.NewDB(rdb, sqlitedialect.New())
			connector = closingConnector{Connector: connector, also: rdb}
		}
		sqldb := sql.OpenDB(connector)
		// SQLite has one writer at a time: with several pooled connections, waiting writers
		// sleep in SQLite's busy handler (up to 100 ms a round), which made the p99 of
		// concurrent writes near a second. One connection queues them in Go instead, as
		// River's SQLite driver recommends. Code that holds a transaction must not use the
		// pool meanwhile (it would wait forever): stores do all of a transaction's work on it.
		sqldb.SetMaxOpenConns(1)
		db = bun.NewDB(sqldb, sqlitedialect.New())
		groupCommit(db, sqliteBusy(o.statementTimeout))
		if reader != nil {
			registerReader(db, reader)
		}
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("storage: database does not answer (%s): %w", Redact(databaseURL), err)
	}
	return db, nil
}

// OpenHealth opens a pool of one connection of its own on the database, for GET /up: the health
// check answers even when the service's pool is exhausted by requests waiting on a lock.
func OpenHealth(ctx context.Context, databaseURL string) (*sql.DB, error) {
	db, err := Open(ctx, databaseURL, func(o *openOptions) { o.noReaders = true })
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db.DB, nil
}

// CheckURL refuses a "scheme://" value that Open would not read as PostgreSQL or SQLite (mysql://,
// a misspelt postgress://, an upper-case POSTGRES:// that pgx does not take as a URL): taken as a
// SQLite path, such a value became directories named after its credentials. The error names the
// scheme, never the value, which may hold a password. Configuration validation calls it too.
func CheckURL(databaseURL string) error {
	if scheme := urlScheme(databaseURL); scheme != "" && !IsPostgresURL(databaseURL) && scheme != "sqlite" && scheme != "file" {
		return fmt.Errorf("storage: unsupported database URL scheme %q: use postgres:// (or postgresql://) or a SQLite file path", scheme)
	}
	if IsPostgresURL(databaseURL) {
		if _, err := url.Parse(databaseURL); err != nil {
			return errors.New("storage: the PostgreSQL URL does not parse") // url's error quotes it
		}
	}
	return nil
}

// urlScheme returns the scheme, as written, of a "scheme://..." value, or "" for anything else
// (a plain path, "sqlite:x.db", "file:x.db").
func urlScheme(v string) string {
	i := strings.Index(v, "://")
	if i <= 0 {
		return ""
	}
	for j, r := range v[:i] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || j > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return ""
		}
	}
	return v[:i]
}

// IsPostgresURL reports whether databaseURL names a PostgreSQL server.
func IsPostgresURL(databaseURL string) bool {
	return strings.HasPrefix(databaseURL, "postgres://") || strings.HasPrefix(databaseURL, "postgresql://")
}

// IsPostgres reports whether db runs on PostgreSQL (as opposed to SQLite).
func IsPostgres(db bun.IDB) bool {
	return db.Dialect().Name() == dialect.PG
}

func pgconnConfig(databaseURL string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("storage: invalid PostgreSQL URL (%s): %w", Redact(databaseURL), err)
	}
	return cfg, nil
}

func sqliteDSN(databaseURL string, busy time.Duration) (string, error) {
	path := strings.TrimPrefix(strings.TrimPrefix(databaseURL, "sqlite:"), "file:")
	query := ""
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path, query = path[:i], path[i+1:]
	}
	if path == "" {
		return "", errors.New("storage: empty SQLite path")
	}
	if path != ":memory:" {
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return "", fmt.Errorf("storage: create SQLite directory: %w", err)
			}
		}
	}
	dsn := "file:" + path + "?" + sqlitePragmas + "&_pragma=busy_timeout(" + strconv.FormatInt(sqliteBusy(busy).Milliseconds(), 10) + ")"
	if query != "" {
		dsn += "&" + query
	}
	return dsn, nil
}

// sqliteBusy is SQLite's busy timeout for a statement timeout (0: 10 s).
func sqliteBusy(statementTimeout time.Duration) time.Duration {
	if statementTimeout <= 0 {
		return 10 * time.Second
	}
	return statementTimeout
}

// Redact returns databaseURL with any password replaced, for logs and errors.
func Redact(databaseURL string) string {
	u, err := url.Parse(databaseURL)
	if err != nil || u.User == nil {
		if err != nil && IsPostgresURL(databaseURL) {
			return "postgres://(unparsable)"
		}
		return databaseURL
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// IsUnavailable reports whether err is the database giving up a statement or going away, rather
// than refusing it: a context deadline or cancellation (reported by pgx as a bad connection, by
// SQLite as SQLITE_INTERRUPT), a lock not obtained in time (PostgreSQL's statement_timeout 57014
// and lock_timeout 55P03, SQLite's busy timeout SQLITE_BUSY), a lost connection, or a
// connection that could not be opened.
func IsUnavailable(err error) bool {
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "57014" || pgErr.Code == "55P03"
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		code := liteErr.Code() & 0xff
		return code == sqlite3.SQLITE_INTERRUPT || code == sqlite3.SQLITE_BUSY
	}
	var netErr net.Error
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, driver.ErrBadConn) ||
		(errors.As(err, &netErr) && netErr.Timeout())
}

// IsUniqueViolation reports whether err is a unique-constraint violation on either engine.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		code := liteErr.Code()
		return code == sqlite3.SQLITE_CONSTRAINT_UNIQUE || code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}
