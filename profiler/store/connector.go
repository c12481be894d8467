package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/mattn/go-sqlite3"
)

// connector opens SQLite connections for one pool with one DSN, and runs the
// per-connection pragmas that the DSN cannot express.
type connector struct {
	drv *sqlite3.SQLiteDriver
	dsn string
}

var _ driver.Connector = (*connector)(nil)

// connKind is what a connector's connections may do.
type connKind int

const (
	// connWriter opens read-write, sets WAL and begins transactions
	// IMMEDIATE so that it takes the write lock up front.
	connWriter connKind = iota
	// connReader opens with mode=ro and only queries.
	connReader
	// connImmutable also sets immutable=1: no locks and no shared-memory
	// index, so it reads a database on a disk that cannot take one; it
	// does not see writes made after it opened.
	connImmutable
)

// newConnector returns a connector of kind for the database at the absolute
// path abs.
func newConnector(abs string, kind connKind, busy time.Duration, maxPageCount int) *connector {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(busy.Milliseconds(), 10))
	q.Set("_foreign_keys", "1")
	q.Set("_synchronous", "NORMAL")
	switch kind {
	case connWriter:
		q.Set("_journal_mode", "WAL")
		q.Set("_txlock", "immediate")
	case connReader, connImmutable:
		q.Set("mode", "ro")
		q.Set("_query_only", "1")
		if kind == connImmutable {
			q.Set("immutable", "1")
		}
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: abs, RawQuery: q.Encode()}
	c := &connector{dsn: u.String(), drv: &sqlite3.SQLiteDriver{}}
	if maxPageCount > 0 {
		c.drv.ConnectHook = func(conn *sqlite3.SQLiteConn) error {
			if _, err := conn.Exec(fmt.Sprintf("PRAGMA max_page_count = %d", maxPageCount), nil); err != nil {
				return fmt.Errorf("set max_page_count: %w", err)
			}
			return nil
		}
	}
	return c
}

// Connect opens one connection.
func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.drv.Open(c.dsn)
}

// Driver returns the underlying driver.
func (c *connector) Driver() driver.Driver { return c.drv }
