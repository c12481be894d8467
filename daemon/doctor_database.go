package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/internal/dirlock"
	"github.com/gpulet/gpuletd/profiler/store"
)

// DatabaseReport is the state_dir's database as serve would open it.
type DatabaseReport struct {
	Path string `json:"path"`
	// Missing says there is none yet: serve makes it.
	Missing bool `json:"missing,omitempty"`
	// InUse names the gpuletd that holds state_dir (" (pid N)", or "" for
	// one that did not say): the file is not read while it serves.
	InUse *string `json:"in_use,omitempty"`
	// Summary is what it holds, when it could be read.
	Summary *store.Summary `json:"summary,omitempty"`
	// MigratesTo is the schema serve migrates it to, when it is older.
	MigratesTo int `json:"migrates_to,omitempty"`
	// Problem says why serve would refuse it; Fix what to do.
	Problem string `json:"problem,omitempty"`
	Fix     string `json:"fix,omitempty"`
	// Unread says why this user could not read it (serve may run as
	// another): a warning, not a refusal.
	Unread string `json:"unread,omitempty"`
	// LastRun says how the daemon's last run ended (LastRun), when the
	// history says.
	LastRun string `json:"last_run,omitempty"`
}

// databaseReport checks the database of cfg's state_dir as serve's start
// would, without changing it: it holds the state directory's lock while it
// reads (so no daemon starts meanwhile), and reads nothing of a database a
// running daemon holds.
func databaseReport(ctx context.Context, cfg config.Config) *DatabaseReport {
	path := filepath.Join(cfg.StateDir, store.FileName)
	r := &DatabaseReport{Path: path}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		r.Missing = true
		return r
	}
	lock, err := dirlock.Lock(cfg.StateDir)
	switch {
	case errors.Is(err, dirlock.ErrInUse):
		holder := dirlock.Holder(cfg.StateDir)
		r.InUse = &holder
		return r
	case err == nil:
		defer lock.Close()
	}
	sum, lastRun, err := inspect(ctx, path, lock != nil)
	msg := ""
	if err != nil {
		// Inspect names the file, which the report names already.
		abs, _ := filepath.Abs(path)
		msg = strings.TrimPrefix(err.Error(), "inspect "+abs+": ")
	}
	switch {
	case err == nil:
		r.Summary = &sum
		if v := store.SchemaVersion(); sum.SchemaVersion < v {
			r.MigratesTo = v
		}
		r.LastRun = lastRun
	case errors.Is(err, store.ErrSchemaTooNew):
		r.Summary = &sum
		r.Problem = msg
		r.Fix = "a newer gpuletd wrote it: run that release again, or restore a backup taken before it (gpuletd restore FILE)"
	case errors.Is(err, store.ErrCorrupt), errors.Is(err, store.ErrNotGpuletd):
		r.Problem = msg
		r.Fix = "restore a backup (gpuletd restore FILE), or move it aside (mv " + path + " " + path + ".bad) and let serve start an empty one, profiling the models again"
	default:
		r.Unread = msg
	}
	if r.Problem == "" {
		if who := store.WriteLockHolders(path); who != "" {
			r.Problem = "its write lock is held by " + who
			r.Fix = fmt.Sprintf("end the write transaction that process holds open (a sqlite3 shell left inside BEGIN), or stop it: serve waits %s for the lock, then stops", store.DefaultBusyTimeout)
		}
	}
	return r
}

// inspect summarizes the database at path as serve would find it, and
// says how the daemon's last run ended (LastRun): with the state folder's
// lock held (locked) through SQLite's write-ahead log too, where a daemon
// that was killed left what it wrote last; else, or when that cannot be
// read so (another user's files), the main file alone (store.Inspect),
// which also says what is wrong with a damaged one, and no last run.
func inspect(ctx context.Context, path string, locked bool) (sum store.Summary, lastRun string, err error) {
	if locked {
		err := store.ReadFile(ctx, path, true, func(st *store.Store) error {
			var err error
			if sum, err = st.Summary(ctx); err != nil {
				return err
			}
			lastRun, _ = LastRun(ctx, st) // a history it cannot read says nothing of the last run
			return nil
		})
		if err == nil {
			return sum, lastRun, nil
		}
	}
	sum, err = store.Inspect(ctx, path)
	return sum, "", err
}
