package storage

import (
	"database/sql/driver"
	"errors"
	"io"
	"net/url"
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
// in memory or in a shared cache), db itself. A read sees what was committed when its statement
// began. Hold no transaction open on it: SQLite rewinds its write-ahead log only when no read is
// under way, so reads that never pause let the log grow.
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

// readersFit reports whether a SQLite DSN (as sqliteDSN writes it) suits a pool of readers: not
// a database in memory (each connection would open its own, or share one without WAL), nor a
// shared cache, where SQLite locks by table and a read beside a write fails at once with
// SQLITE_LOCKED instead of reading the last commit.
func readersFit(dsn string) bool {
	path, query, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return false
	}
	return path != ":memory:" && q.Get("mode") != "memory" && q.Get("vfs") != "memdb" && q.Get("cache") != "shared"
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
