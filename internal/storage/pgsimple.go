package storage

import (
	"context"
	"database/sql/driver"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// simpleArgless makes a query without arguments use PostgreSQL's simple protocol, one round
// trip. bun writes its arguments into the SQL text, so each of its statements is new to pgx:
// in pgx's default mode (prepare, then cache by text) every one cost a Parse/Describe round trip
// before the execution and evicted a cached statement. pgx already sends Exec without arguments
// this way; queries with arguments (River's) keep the statement cache.
type simpleArgless struct{ driver.Connector }

func (c simpleArgless) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if pc, ok := conn.(*stdlib.Conn); ok {
		return simpleArglessConn{pc}, nil
	}
	return conn, nil
}

// simpleArglessConn keeps every method of *stdlib.Conn (BeginTx, ResetSession, IsValid,
// CheckNamedValue, ...) and changes QueryContext only.
type simpleArglessConn struct{ *stdlib.Conn }

var simpleProtocol = []driver.NamedValue{{Ordinal: 1, Value: pgx.QueryExecModeSimpleProtocol}}

func (c simpleArglessConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if len(args) == 0 {
		args = simpleProtocol
	}
	return c.Conn.QueryContext(ctx, query, args)
}
