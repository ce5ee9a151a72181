package storage

import (
	"database/sql/driver"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"
	"weak"

	"github.com/uptrace/bun"
)

// ReadConns is the size of a SQLite database's pool of read-only connections (Reader).
const ReadConns = 4

// readers holds the read-only pool of each SQLite database opened by Open, keyed weakly as
// groups is.
var readers sync.Map // weak.Pointer[bun.DB] -> *bun.DB

// Reader returns the handle for reads outside a transaction that may take long, such as a list's
// page and its count, a search or the counts of /metrics: on a SQLite file, a pool of ReadConns
// read-only connections of its own, which WAL lets read while the one writer connection writes,
// so that such a read never holds the writes back; anywhere else (PostgreSQL, a SQLite database
// in memory), db itself. A read sees what was committed when its statement began.
func Reader(db *bun.DB) *bun.DB {
	if r, ok := readers.Load(weak.Make(db)); ok {
		return r.(*bun.DB)
	}
	return db
}

// registerReader makes r the Reader of db until db is collected.
func registerReader(db, r *bun.DB) {
	key := weak.Make(db)
	readers.Store(key, r)
	runtime.AddCleanup(db, func(k weak.Pointer[bun.DB]) { readers.Delete(k) }, key)
}

// inMemory reports whether a SQLite DSN names a database in memory, which each connection
// would open afresh: such a database gets no readers.
func inMemory(dsn string) bool {
	return strings.HasPrefix(dsn, "file::memory:") || strings.Contains(dsn, "mode=memory")
}

// closingConnector closes also (the readers) when database/sql closes the pool it connects.
type closingConnector struct {
	driver.Connector
	also io.Closer
}

// Close implements io.Closer, which sql.DB.Close calls on its connector.
func (c closingConnector) Close() error {
	var err error
	if cl, ok := c.Connector.(io.Closer); ok {
		err = cl.Close()
	}
	return errors.Join(err, c.also.Close())
}
