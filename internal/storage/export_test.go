package storage

import (
	"context"
	"database/sql"
	"fmt"
)

// OnGroupCommit, when set, is told the size of each group the SQLite committer commits.
func OnGroupCommit(f func(n int)) { groupCommitted = f }

// OnGroupQueued, when set, is told the committer's queue length after each caller joined it.
func OnGroupQueued(f func(n int)) { groupQueued = f }

// CachedStatements is the number of statements the SQLite connection of db keeps compiled, and
// how many of them are in use.
func CachedStatements(db *sql.DB) (n, busy int, err error) {
	conn, err := db.Conn(context.Background())
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stmtCacheConn)
		if !ok {
			return fmt.Errorf("driver connection %T, want *stmtCacheConn", dc)
		}
		n = len(c.stmts)
		for _, s := range c.stmts {
			if s.busy {
				busy++
			}
		}
		return nil
	})
	return n, busy, err
}

// MaxCachedStatements is the bound of that cache.
const MaxCachedStatements = maxCachedStatements

// SQLiteLiteral is sqliteLiteral.
var SQLiteLiteral = sqliteLiteral

// LimitAsExpression is limitAsExpression.
var LimitAsExpression = limitAsExpression
