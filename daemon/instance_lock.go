package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// One daemon per state and runtime directory.
//
// Two daemons started on one state_dir or runtime_dir (a second `gpuletd
// serve` run by hand beside the service, say) would share the store, the
// executors' socket names and the MPS pipe directories: the second marks
// the first's profile runs interrupted, replaces its executor sockets and,
// on a GPU, starts a second MPS control daemon on the same pipe. So the
// daemon holds an advisory lock (flock) on a gpuletd.lock file in each of
// the two directories for as long as it runs. The kernel lets a lock go
// when the process ends, however it ends, so there is never a stale lock to
// clear by hand; executors do not inherit it (Go opens files close-on-exec).

// lockFileName is the lock file in each directory the daemon holds.
const lockFileName = "gpuletd.lock"

// ErrInUse reports that another daemon holds a directory this one needs.
var ErrInUse = errors.New("another gpuletd uses this directory")

// lockedDir is one directory to hold: the configuration field that names
// it (for messages) and its path.
type lockedDir struct{ field, dir string }

// dirLocks are the locks a daemon holds; release lets them go.
type dirLocks struct{ files []*os.File }

// lockDirs takes the lock of every directory in dirs (each once, however
// often it is named), creating the directories as needed. A directory held
// by another process is ErrInUse, with that process's ID where its lock file
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
		f, err := lockDir(dir)
		if errors.Is(err, ErrInUse) {
			l.release()
			return nil, fmt.Errorf("lock %s %s: %w%s: stop it first, or give this daemon a state_dir and a runtime_dir of its own",
				d.field, dir, ErrInUse, holderOf(filepath.Join(dir, lockFileName)))
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

// lockDir opens (creating it when it can) and locks dir's lock file, and
// writes this process's ID into it for the next daemon's message.
func lockDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("make directory: %w", err)
	}
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	writable := err == nil
	if err != nil {
		// flock needs no write access: an existing file still guards a
		// directory this process cannot write.
		if f, err = os.Open(path); err != nil {
			return nil, fmt.Errorf("open lock file: %w", err)
		}
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrInUse
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if writable { // best effort: the lock holds without it
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
	}
	return f, nil
}

// holderOf is " (pid N)" when the lock file at path names its holder.
func holderOf(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}

// release lets every lock go. The lock files stay: removing one another
// daemon is about to lock would let a third lock a new file beside it.
func (l *dirLocks) release() {
	for _, f := range l.files {
		_ = f.Close()
	}
	l.files = nil
}
