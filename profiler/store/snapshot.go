package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/mattn/go-sqlite3"
	"go.uber.org/zap"
)

// Snapshot returns a copy of the whole database as it stood at one moment,
// in SQLite's file format: what a backup file holds. It reads every page in
// one read transaction of one read-only connection, so a write made
// meanwhile is in it whole or not at all, and what the write-ahead log
// holds that the main file does not yet is in it too. Writes go on while
// it reads. The copy is held in memory: a node's database is a few MiB
// (profiles, plans, and the events of the retention window).
func (s *Store) Snapshot(ctx context.Context) ([]byte, error) {
	b, err := snapshot(ctx, s.reader())
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", s.path, err)
	}
	return b, nil
}

// SnapshotFile is Snapshot of the database at path when this process does
// not have it open (a backup taken while no daemon runs, or by another
// process than the daemon's); see ReadFile.
func SnapshotFile(ctx context.Context, path string, alone bool) ([]byte, error) {
	var b []byte
	err := ReadFile(ctx, path, alone, func(s *Store) error {
		var err error
		b, err = snapshot(ctx, s.reader()) // ReadFile names the file
		return err
	})
	return b, err
}

// ReadFile opens the database at path read-only, when this process does
// not have it open, and hands it to read as a Store whose reading methods
// (Events, Snapshot, …) work and whose writing ones fail (ErrReadOnly). It
// changes nothing in the file; a daemon may be writing it meanwhile.
// Reading a database in WAL mode makes SQLite create its log and index
// beside it when they are not there; with alone (no other process has the
// database open: the caller holds the state directory's lock, package
// dirlock) the ones it made are removed again.
func ReadFile(ctx context.Context, path string, alone bool, read func(*Store) error) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	// Opened read-only, SQLite reports a missing file as one it "cannot
	// open"; the system's own error says more.
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("read %s: %w", abs, err)
	}
	var made []string
	for _, p := range Files(abs)[1:] {
		if _, err := os.Lstat(p); alone && errors.Is(err, fs.ErrNotExist) {
			made = append(made, p)
		}
	}
	db := sql.OpenDB(newConnector(abs, connReader, DefaultBusyTimeout, 0))
	st := &Store{path: abs, cfg: defaultConfig(), now: time.Now, log: zap.NewNop(), unwritable: errOnlyRead, runLocks: map[int64]*os.File{}}
	st.r.Store(db)
	err = errors.Join(read(st), db.Close())
	for _, p := range made {
		if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("remove %s: %w", p, rerr))
		}
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", abs, err)
	}
	return nil
}

// errOnlyRead is why a Store of ReadFile cannot be written.
var errOnlyRead = errors.New("opened only to be read")

// snapshot serializes the main database of one connection of db.
func snapshot(ctx context.Context, db *sql.DB) ([]byte, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, wrap("connect", err)
	}
	defer conn.Close()
	var out []byte
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("driver connection is a %T, not SQLite's", dc)
		}
		b, err := sc.Serialize("main")
		out = b
		return err
	})
	if err != nil {
		return nil, wrap("serialize database", err)
	}
	return out, nil
}
