package store

import (
	"fmt"
	"os"
	"runtime"
	"time"

	"go.uber.org/zap"
)

// DefaultBusyTimeout is how long a connection waits for a lock held by another
// process before it reports ErrBusy.
const DefaultBusyTimeout = 5 * time.Second

// Option changes how Open sets the store up.
type Option func(*config)

type config struct {
	log          *zap.Logger
	now          func() time.Time
	busyTimeout  time.Duration
	readers      int
	maxPageCount int
	quickCheck   bool
	owner        string // who holds the runs this process starts (WithOwner)

	readOnlyFallback bool
}

func defaultConfig() config {
	return config{
		log:         zap.NewNop(),
		now:         time.Now,
		busyTimeout: DefaultBusyTimeout,
		readers:     max(4, runtime.GOMAXPROCS(0)),
		quickCheck:  true,
		owner:       fmt.Sprintf("gpuletd (pid %d)", os.Getpid()),
	}
}

// WithOwner names this process in the profile runs it starts, as a run it
// leaves running (it ended during the run) is said to be left by: "the
// daemon (pid 4242)". The default is "gpuletd (pid N)".
func WithOwner(name string) Option {
	return func(c *config) {
		if name != "" {
			c.owner = name
		}
	}
}

// WithLogger sets the logger the store reports migrations and checks to. The
// default discards everything.
func WithLogger(l *zap.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.log = l
		}
	}
}

// WithClock sets the clock that stamps records written without a time and
// migrations as they are applied. The default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// WithBusyTimeout sets how long a connection waits on a lock held by another
// process (default DefaultBusyTimeout).
func WithBusyTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.busyTimeout = d
		}
	}
}

// WithReaders sets the size of the read-only connection pool (default the
// larger of 4 and GOMAXPROCS).
func WithReaders(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.readers = n
		}
	}
}

// WithMaxPageCount caps the database at n pages (PRAGMA max_page_count on the
// writer connection). Writes that would grow it further fail with
// ErrDiskFull. Zero, the default, leaves SQLite's own limit.
func WithMaxPageCount(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxPageCount = n
		}
	}
}

// WithQuickCheck turns the PRAGMA quick_check that Open runs on an existing
// database on or off (default on). The check reads every page once.
func WithQuickCheck(on bool) Option {
	return func(c *config) { c.quickCheck = on }
}

// WithReadOnlyFallback lets Open succeed on a database it cannot write (a
// full disk, a failing or read-only file system) as long as its schema is
// current: reads work, writes fail with ErrReadOnly until Recover succeeds.
// Without it such a database fails to open.
func WithReadOnlyFallback() Option {
	return func(c *config) { c.readOnlyFallback = true }
}
