package storagetest

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
)

// ErrInjected is the error of a statement Faults made fail.
var ErrInjected = errors.New("storagetest: injected database fault")

// Faults makes chosen statements of a database fail, to test what a service answers and records
// when a write fails after an upstream acted. Open a database through it with Open; the rules
// apply to every connection of that database.
type Faults struct {
	mu    sync.Mutex
	rules []*rule
	hits  int
	// recording: every statement is appended to log (Record).
	recording bool
	log       []Statement
}

// Statement is a statement that Record kept, with the arguments bound to it (none when bun
// wrote them into the text).
type Statement struct {
	SQL  string
	Args []any
}

type rule struct {
	re        *regexp.Regexp
	remaining int // < 0: until Clear
}

// Option makes storage.Open pass every statement through f.
func (f *Faults) Option() storage.Option {
	return storage.WithConnector(func(c driver.Connector) driver.Connector { return faultConnector{inner: c, f: f} })
}

// Open opens a second handle on the target's database whose statements pass through f. It is
// closed at the end of the test.
func (f *Faults) Open(t testing.TB, tg Target) *bun.DB {
	t.Helper()
	db, err := storage.Open(t.Context(), tg.URL, f.Option())
	if err != nil {
		t.Fatalf("open %s with faults: %v", tg.Name, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// Fail makes the next n statements whose SQL matches pattern fail (n < 0: every one, until
// Clear). A bound statement's arguments are matched as if written after its text, each quoted
// ('CONSUMIDO'), so a pattern finds a value whether bun wrote it in or it was bound.
func (f *Faults) Fail(pattern string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &rule{re: regexp.MustCompile(pattern), remaining: n})
}

// Clear drops every rule.
func (f *Faults) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

// Hits counts the statements made to fail.
func (f *Faults) Hits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

// Record starts keeping the SQL of every statement handed to the driver through f, in order,
// with "BEGIN", "COMMIT" and "ROLLBACK" for transactions (River's statements included), until
// Recorded. A statement made to fail is kept too.
func (f *Faults) Record() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recording, f.log = true, nil
}

// Recorded stops the recording Record started and returns the SQL of the statements it kept.
func (f *Faults) Recorded() []string {
	var out []string
	for _, s := range f.RecordedStatements() {
		out = append(out, s.SQL)
	}
	return out
}

// RecordedStatements is Recorded with each statement's arguments.
func (f *Faults) RecordedStatements() []Statement {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.log
	f.recording, f.log = false, nil
	return out
}

func (f *Faults) note(query string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.recording {
		f.log = append(f.log, Statement{SQL: query})
	}
}

func (f *Faults) check(query string, args ...driver.NamedValue) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.recording {
		st := Statement{SQL: query}
		for _, a := range args {
			st.Args = append(st.Args, a.Value)
		}
		f.log = append(f.log, st)
	}
	if len(args) > 0 {
		var b strings.Builder
		b.WriteString(query)
		for _, a := range args {
			fmt.Fprintf(&b, " '%v'", a.Value)
		}
		query = b.String()
	}
	for _, r := range f.rules {
		if r.remaining != 0 && r.re.MatchString(query) {
			if r.remaining > 0 {
				r.remaining--
			}
			f.hits++
			return ErrInjected
		}
	}
	return nil
}

type faultConnector struct {
	inner driver.Connector
	f     *Faults
}

func (c faultConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &faultConn{Conn: conn, f: c.f}, nil
}

func (c faultConnector) Driver() driver.Driver { return c.inner.Driver() }

// faultConn checks every statement against the rules before the real connection runs it.
type faultConn struct {
	driver.Conn
	f *Faults
}

func (c *faultConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := c.f.check(query); err != nil {
		return nil, err
	}
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	return c.Conn.Prepare(query)
}

func (c *faultConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if err := c.f.check(query, args...); err != nil {
		return nil, err
	}
	if e, ok := c.Conn.(driver.ExecerContext); ok {
		return e.ExecContext(ctx, query, args)
	}
	return nil, driver.ErrSkip
}

func (c *faultConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := c.f.check(query, args...); err != nil {
		return nil, err
	}
	if q, ok := c.Conn.(driver.QueryerContext); ok {
		return q.QueryContext(ctx, query, args)
	}
	return nil, driver.ErrSkip
}

func (c *faultConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.f.note("BEGIN")
	var tx driver.Tx
	var err error
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		tx, err = b.BeginTx(ctx, opts)
	} else {
		//lint:ignore SA1019 the fallback database/sql itself uses for a driver without BeginTx
		tx, err = c.Conn.Begin()
	}
	if err != nil {
		return nil, err
	}
	return faultTx{Tx: tx, f: c.f}, nil
}

// faultTx records the end of a transaction.
type faultTx struct {
	driver.Tx
	f *Faults
}

func (t faultTx) Commit() error {
	t.f.note("COMMIT")
	return t.Tx.Commit()
}

func (t faultTx) Rollback() error {
	t.f.note("ROLLBACK")
	return t.Tx.Rollback()
}

func (c *faultConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *faultConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *faultConn) CheckNamedValue(v *driver.NamedValue) error {
	if n, ok := c.Conn.(driver.NamedValueChecker); ok {
		return n.CheckNamedValue(v)
	}
	return driver.ErrSkip
}
