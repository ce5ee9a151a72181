package storage

import (
	"context"
	"database/sql/driver"
	"errors"
	"regexp"
	"strings"
)

// maxCachedStatements bounds stmtCacheConn's cache: past it, a new statement text runs
// uncached, as before. The services and River have a few dozen statements with arguments.
const maxCachedStatements = 256

// sqliteConn is what database/sql uses of modernc.org/sqlite's connection.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// stmtCacheConn keeps each statement that comes with arguments (River's, the stores' bound
// statements) compiled on the SQLite connection, keyed by its text. modernc's connection
// compiles such a statement at every execution; River completes each job with one UPDATE ...
// RETURNING (riversqlite has no batch form), and compiling it was about a third of the time a
// completion held the one connection (BenchmarkCompleteSQLite in internal/jobs). bun writes its
// arguments into the SQL text, so its own statements arrive without arguments and are not
// cached (each text is new).
//
// A cached statement in use (its rows still open) is not shared: the second caller runs
// uncached. database/sql uses a connection from one goroutine at a time.
type stmtCacheConn struct {
	sqliteConn
	stmts map[string]*cachedStmt
}

// sqliteStmt is what stmtCacheConn uses of modernc.org/sqlite's prepared statement.
type sqliteStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

type cachedStmt struct {
	stmt sqliteStmt
	busy bool
}

func newStmtCacheConn(c driver.Conn) driver.Conn {
	sc, ok := c.(sqliteConn)
	if !ok {
		return c
	}
	return &stmtCacheConn{sqliteConn: sc, stmts: make(map[string]*cachedStmt)}
}

// take returns the cached statement of query, compiling it on first use, or nil when it is in
// use, the cache is full, or the connection cannot prepare it (the uncached path then runs it
// and reports any error).
func (c *stmtCacheConn) take(ctx context.Context, query string) *cachedStmt {
	if s, ok := c.stmts[query]; ok {
		if s.busy {
			return nil
		}
		s.busy = true
		return s
	}
	if len(c.stmts) >= maxCachedStatements {
		return nil
	}
	ds, err := c.sqliteConn.PrepareContext(ctx, limitAsExpression(query))
	if err != nil {
		return nil
	}
	st, ok := ds.(sqliteStmt)
	if !ok {
		_ = ds.Close()
		return nil
	}
	s := &cachedStmt{stmt: st, busy: true}
	c.stmts[query] = s
	return s
}

// limitParam matches a LIMIT whose count is a bound parameter (?, ?N, $N, :name, @name).
var limitParam = regexp.MustCompile(`(?i)\bLIMIT(\s+)([?$:@][0-9A-Za-z_]*)`)

// limitAsExpression writes LIMIT ?N as LIMIT (?N + 0), which limits the same. SQLite plans a
// LIMIT that is a bare parameter with the value bound, so it compiles such a statement again
// at every execution, cached or not (River's fetch of available jobs is one: LIMIT ?3); an
// expression is evaluated when the statement runs instead. Text inside a string literal, a
// quoted identifier or a comment is left as it is.
func limitAsExpression(query string) string {
	ms := limitParam.FindAllStringSubmatchIndex(query, -1)
	if ms == nil {
		return query
	}
	var b strings.Builder
	last, i := 0, 0
	var in byte // the byte that closes the quote or comment the scan is in; 0 in code
	for _, m := range ms {
		for ; i < m[0]; i++ {
			c, next := query[i], byte(0)
			if i+1 < len(query) {
				next = query[i+1]
			}
			switch {
			case in == 0 && (c == '\'' || c == '"' || c == '`'):
				in = c
			case in == 0 && c == '[':
				in = ']'
			case in == 0 && c == '-' && next == '-':
				in, i = '\n', i+1
			case in == 0 && c == '/' && next == '*':
				in, i = '/', i+1
			case in == '/' && c == '*' && next == '/':
				in, i = 0, i+1
			case in != 0 && in != '/' && c == in:
				in = 0 // a doubled quote closes and opens again
			}
		}
		if in != 0 {
			continue
		}
		b.WriteString(query[last:m[0]])
		b.WriteString("LIMIT" + query[m[2]:m[3]] + "(" + query[m[4]:m[5]] + " + 0)")
		last = m[1]
	}
	b.WriteString(query[last:])
	return b.String()
}

func (c *stmtCacheConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if len(args) > 0 {
		if s := c.take(ctx, query); s != nil {
			defer func() { s.busy = false }()
			return s.stmt.ExecContext(ctx, args)
		}
	}
	return c.sqliteConn.ExecContext(ctx, query, args)
}

func (c *stmtCacheConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if len(args) > 0 {
		if s := c.take(ctx, query); s != nil {
			rows, err := s.stmt.QueryContext(ctx, args)
			if err != nil {
				s.busy = false
				return nil, err
			}
			if sr, ok := rows.(sqliteRows); ok {
				return &releasingRows{sqliteRows: sr, s: s}, nil
			}
			// The statement ran (it may have written): never run it again uncached.
			return &releasingPlainRows{Rows: rows, s: s}, nil
		}
	}
	return c.sqliteConn.QueryContext(ctx, query, args)
}

// Close finalizes the cached statements, then closes the connection.
func (c *stmtCacheConn) Close() error {
	var errs []error
	for q, s := range c.stmts {
		errs = append(errs, s.stmt.Close())
		delete(c.stmts, q)
	}
	return errors.Join(append(errs, c.sqliteConn.Close())...)
}

// sqliteRows is what database/sql uses of modernc.org/sqlite's rows.
type sqliteRows interface {
	driver.Rows
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeLength
	driver.RowsColumnTypeNullable
	driver.RowsColumnTypePrecisionScale
	driver.RowsColumnTypeScanType
}

// releasingRows gives its statement back to the cache when closed (modernc resets it then).
type releasingRows struct {
	sqliteRows
	s *cachedStmt
}

func (r *releasingRows) Close() error {
	err := r.sqliteRows.Close()
	r.s.busy = false
	return err
}

// releasingPlainRows is releasingRows for rows without column types (not modernc's today).
type releasingPlainRows struct {
	driver.Rows
	s *cachedStmt
}

func (r *releasingPlainRows) Close() error {
	err := r.Rows.Close()
	r.s.busy = false
	return err
}
