package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpulet/gpuletd/internal/dirlock"
	"go.uber.org/zap"
)

// One daemon per state and runtime directory.
//
// Two daemons started on one state_dir or runtime_dir (a second `gpuletd
// serve` run by hand beside the service, say) would share the store, the
// executors' socket names and the MPS pipe directories: the second marks
// the first's profile runs interrupted, replaces its executor sockets and,
// on a GPU, starts a second MPS control daemon on the same pipe. So the
// daemon holds an advisory lock (flock) on a gpuletd.lock file in each of
// the two directories for as long as it runs (package dirlock).

// lockedDir is one directory to hold: the configuration field that names
// it (for messages) and its path.
type lockedDir struct{ field, dir string }

// dirLocks are the locks a daemon holds; release lets them go.
type dirLocks struct{ files []*os.File }

// lockDirs takes the lock of every directory in dirs (each once, however
// often it is named), creating the directories as needed. A directory held
// by another process is dirlock.ErrInUse, with that process's ID where its lock file
// gives it. A lock file that can be neither created nor opened (a read-only
// state directory, which the store can still serve from) is logged and
// passed over: the daemon then runs without that guard rather than not at
// all.
func lockDirs(log *zap.Logger, dirs ...lockedDir) (*dirLocks, error) {
	l := &dirLocks{}
	seen := map[string]bool{}
	for _, d := range dirs {
		dir := filepath.Clean(d.dir)
		if d.dir == "" || seen[dir] {
			continue
		}
		seen[dir] = true
		f, err := dirlock.Lock(dir)
		if errors.Is(err, dirlock.ErrInUse) {
			l.release()
			return nil, fmt.Errorf("lock %s %s: %w%s: stop it first, or give this daemon a state_dir and a runtime_dir of its own",
				d.field, dir, dirlock.ErrInUse, dirlock.Holder(dir))
		}
		if err != nil {
			log.Warn("cannot lock a directory: a second daemon started on it would not be refused",
				zap.String(d.field, dir), zap.Error(err))
			continue
		}
		l.files = append(l.files, f)
	}
	return l, nil
}

// release lets every lock go. The lock files stay: removing one another
// daemon is about to lock would let a third lock a new file beside it.
func (l *dirLocks) release() {
	for _, f := range l.files {
		_ = f.Close()
	}
	l.files = nil
}
