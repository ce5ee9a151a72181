package storage

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"
	"weak"

	"github.com/uptrace/bun"
)

// RunInTx runs fn in a transaction on db and commits it when fn returns nil; an error from fn
// rolls its work back and is returned as it is.
//
// On PostgreSQL it is db.RunInTx. On a SQLite database opened by Open it is a group commit:
// SQLite has one writer and pays one fsync per commit (synchronous FULL), so the transactions
// that queue for the connection run one after another inside a single transaction, each in a
// savepoint of its own, and are committed together. Each caller still gets its own outcome:
// an error from its fn (or a panic, re-raised in the caller) undoes its savepoint only, and
// RunInTx returns only after the commit that holds its work is on disk, so a record that was
// answered survives a power cut. A failed commit fails every transaction of the group; none of
// them was committed.
//
// Inside a group fn gets ctx without its cancellation: a deadline interrupting a SQLite write
// inside a transaction would roll back the whole group. A caller whose ctx ended before its
// turn gets ctx's error and fn does not run. fn must not use db itself (on SQLite the group
// holds the only connection) and must not call RunInTx.
func RunInTx(ctx context.Context, db *bun.DB, fn func(ctx context.Context, tx bun.Tx) error) error {
	g, ok := groups.Load(weak.Make(db))
	if !ok {
		return db.RunInTx(ctx, nil, fn)
	}
	return g.(*committer).run(ctx, db, fn)
}

// Write runs fn, a write of a single statement, with its own commit: on PostgreSQL on the pool
// itself (one round trip, no BEGIN and COMMIT), on SQLite through RunInTx, so that it joins a
// commit group instead of paying its own fsync on the one connection.
func Write(ctx context.Context, db *bun.DB, fn func(ctx context.Context, db bun.IDB) error) error {
	if IsPostgres(db) {
		return fn(ctx, db)
	}
	return RunInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error { return fn(ctx, tx) })
}

// groups holds the committer of each SQLite database opened by Open, keyed weakly: the entry
// goes when the *bun.DB is collected.
var groups sync.Map // weak.Pointer[bun.DB] -> *committer

// groupCommit makes RunInTx group the transactions on db (a SQLite database).
func groupCommit(db *bun.DB, wait time.Duration) {
	key := weak.Make(db)
	groups.Store(key, &committer{wait: wait})
	runtime.AddCleanup(db, func(k weak.Pointer[bun.DB]) { groups.Delete(k) }, key)
}

// groupCommitted, when not nil, is told the size of each committed group (tests).
var groupCommitted func(n int)

// groupQueued, when not nil, is told the queue's length after each caller joined it (tests).
var groupQueued func(n int)

// maxGroup bounds the transactions of one commit, so that the first caller's wait is bounded.
const maxGroup = 64

type committer struct {
	wait time.Duration // bound on the wait for the connection (the busy timeout)

	mu      sync.Mutex
	queue   []*member
	leading bool
}

type member struct {
	ctx   context.Context
	fn    func(ctx context.Context, tx bun.Tx) error
	err   error
	panic any
	done  chan struct{}
	lead  chan struct{}
}

// run queues fn and waits for its outcome. The first caller with nobody leading runs groups
// until the queue is empty or hands the lead to the next waiting caller: no goroutine of its own.
func (c *committer) run(ctx context.Context, db *bun.DB, fn func(ctx context.Context, tx bun.Tx) error) error {
	m := &member{ctx: ctx, fn: fn, done: make(chan struct{}), lead: make(chan struct{}, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, m)
	queued := len(c.queue)
	leader := !c.leading
	c.leading = true
	c.mu.Unlock()
	if groupQueued != nil {
		groupQueued(queued)
	}
	if !leader {
		select {
		case <-m.done:
		case <-m.lead:
			c.leadOnce(db)
			<-m.done
		}
	} else {
		c.leadOnce(db)
		<-m.done
	}
	if m.panic != nil {
		panic(m.panic)
	}
	return m.err
}

// leadOnce commits one group from the head of the queue, then passes the lead to the next
// waiting caller (or gives it up when nobody waits).
func (c *committer) leadOnce(db *bun.DB) {
	c.mu.Lock()
	n := min(len(c.queue), maxGroup)
	group := c.queue[:n:n]
	c.queue = c.queue[n:]
	c.mu.Unlock()

	func() {
		// A panic outside the members' closures (those are recovered in call) must not leave
		// the group's callers waiting forever.
		defer func() {
			if r := recover(); r != nil {
				for _, m := range group {
					if m.err == nil && m.panic == nil {
						m.err = fmt.Errorf("storage: commit group failed: %v", r)
					}
				}
			}
		}()
		c.commit(db, group)
	}()
	for _, m := range group {
		close(m.done)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		c.leading = false
		c.queue = nil
		return
	}
	c.queue[0].lead <- struct{}{}
}

// commit runs group in one transaction and sets each member's outcome.
func (c *committer) commit(db *bun.DB, group []*member) {
	fail := func(err error) {
		for _, m := range group {
			if m.err == nil && m.panic == nil {
				m.err = err
			}
		}
	}
	waitCtx, cancel := context.WithTimeout(context.Background(), c.wait)
	conn, err := db.Conn(waitCtx)
	cancel()
	if err != nil {
		fail(fmt.Errorf("storage: begin transaction: %w", err))
		return
	}
	defer conn.Close()
	// Not bound to any caller's context: database/sql rolls a transaction back when the context
	// of its BeginTx ends. BEGIN IMMEDIATE waits for another process's lock up to busy_timeout.
	tx, err := conn.BeginTx(context.Background(), nil)
	if err != nil {
		fail(fmt.Errorf("storage: begin transaction: %w", err))
		return
	}
	// A group of one needs no savepoint: its failure rolls the transaction back.
	alone := len(group) == 1
	exec := func(q string) error {
		if alone {
			return nil
		}
		_, err := tx.ExecContext(context.Background(), q)
		return err
	}
	ran := false
	for i, m := range group {
		if err := m.ctx.Err(); err != nil {
			m.err = err
			continue
		}
		sp := "grp" + strconv.Itoa(i)
		if err := exec("SAVEPOINT " + sp); err != nil {
			m.err = fmt.Errorf("storage: savepoint: %w", err)
			continue
		}
		call(m, tx)
		if m.err == nil && m.panic == nil {
			ran = true
			if err := exec("RELEASE " + sp); err != nil {
				_ = tx.Rollback()
				fail(fmt.Errorf("storage: release savepoint: %w", err))
				return
			}
			continue
		}
		// ROLLBACK TO keeps the savepoint open; RELEASE closes it. If SQLite rolled the whole
		// transaction back (an I/O error, SQLITE_FULL), the savepoint is gone and so is the work
		// of the group's earlier members: they fail too.
		err := exec("ROLLBACK TO " + sp)
		if err == nil {
			err = exec("RELEASE " + sp)
		}
		if err != nil {
			_ = tx.Rollback()
			fail(fmt.Errorf("storage: transaction rolled back with another one of its commit group: %w", err))
			return
		}
	}
	if !ran {
		_ = tx.Rollback()
		return
	}
	if err := tx.Commit(); err != nil {
		fail(fmt.Errorf("storage: commit: %w", err))
		return
	}
	if groupCommitted != nil {
		groupCommitted(len(group))
	}
}

// call runs m's fn and sets its outcome, turning a panic into a value re-raised in m's
// goroutine.
func call(m *member, tx bun.Tx) {
	defer func() {
		if r := recover(); r != nil {
			m.panic = r
		}
	}()
	m.err = m.fn(context.WithoutCancel(m.ctx), tx)
}
