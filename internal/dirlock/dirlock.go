// Package dirlock holds a directory for one process at a time: an advisory
// lock (flock) on a lock file inside it, which the kernel lets go when the
// process ends, however it ends, so there is never a stale lock to clear by
// hand. The daemon holds its state and runtime directories this way, and
// the commands that replace what a state directory holds (restore) take the
// same lock, so that neither runs while the other does. LockFile holds a
// single file the same way: a profile run's, for the process measuring it.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gpulet/gpuletd/internal/fsperm"
)

// FileName is the lock file in each directory held.
const FileName = "gpuletd.lock"

// ErrInUse reports that another process holds the directory.
var ErrInUse = errors.New("another gpuletd uses this directory")

// Lock opens (creating the directory and the file when it can) and locks
// dir's lock file, and writes this process's ID into it for the message of
// the next one refused. A directory another process holds is ErrInUse.
// Closing the file lets the lock go; child processes do not inherit it (Go
// opens files close-on-exec).
func Lock(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("make directory: %w", err)
	}
	return LockFile(filepath.Join(dir, FileName), strconv.Itoa(os.Getpid()))
}

// LockFile opens (creating it when it can) and locks the file at path, as
// Lock does a directory's, and writes holder into it: who holds it, for
// FileHolder and the messages of those refused. A file another open holds
// is ErrInUse.
func LockFile(path, holder string) (*os.File, error) {
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
			_, _ = f.WriteAt([]byte(holder+"\n"), 0)
		}
		// Taken by root in the service's folder (sudo gpuletd restore),
		// the file stays one the daemon can write its ID into.
		_ = fsperm.GiveToDirOwner(path)
	}
	return f, nil
}

// FileHolder says whether another open of the lock file at path holds it
// now, and who the file names as its holder, now or last ("" when no file
// or no name), without making the file or holding it past the look.
func FileHolder(path string) (held bool, holder string, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, "", nil
	}
	if err != nil {
		return false, "", fmt.Errorf("open lock file: %w", err)
	}
	defer f.Close()
	b := make([]byte, 256)
	n, _ := f.Read(b)
	holder = strings.TrimSpace(string(b[:n]))
	switch err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); {
	case errors.Is(err, unix.EWOULDBLOCK):
		return true, holder, nil
	case err != nil:
		return false, holder, fmt.Errorf("lock %s: %w", path, err)
	}
	return false, holder, nil // closing the file lets the lock go
}

// Held reports whether another process (or another open of the file in
// this one) holds dir, without making the directory or the lock file, nor
// taking the lock for longer than the look: a command that only works
// beside a daemon asks this. A directory or lock file that is not there is
// held by no one.
func Held(dir string) (bool, error) {
	held, _, err := FileHolder(filepath.Join(dir, FileName))
	return held, err
}

// Holder is " (pid N)" when dir's lock file names the process that holds
// or last held it, "" otherwise.
func Holder(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		return ""
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}
