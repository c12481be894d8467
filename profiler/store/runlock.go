package store

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/internal/dirlock"
	"github.com/gpulet/gpuletd/internal/fsperm"
)

// Who is running a profile run.
//
// A run's row says "running" from StartRun to FinishRun; a process that
// ends between the two (killed, or stopped during the run) leaves it so,
// and the next daemon to start marks such runs incomplete. But `gpuletd
// profile` may run beside the daemon, from the same database: a daemon
// started meanwhile marked that live run incomplete too, measured the
// model again itself beside it, and the profile's own end then failed
// (the run was finished already). So the process that starts a run holds
// an advisory lock (flock) on a file named after the run, beside the
// database, until it finishes the run or ends however it ends; the file
// names the process. A running run whose file nobody holds is one its
// process left.

// runLockDir is where the run lock files of the database at dbPath are.
func runLockDir(dbPath string) string {
	return filepath.Join(filepath.Dir(dbPath), "profile-runs")
}

// runLockPath is the lock file of run id.
func (s *Store) runLockPath(id int64) string {
	return filepath.Join(runLockDir(s.path), strconv.FormatInt(id, 10)+".lock")
}

// holdRun takes run id's lock for this process, naming it in the file,
// and keeps it until releaseRun. A lock that cannot be taken (a state
// directory this user may not write) is logged: the run is then one a
// daemon starting meanwhile takes for left, as before runs had owners.
func (s *Store) holdRun(id int64) {
	path := s.runLockPath(id)
	f, err := func() (*os.File, error) {
		dir := filepath.Dir(path)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, err
		}
		// Made by `sudo gpuletd profile` in the service's state_dir, the
		// folder stays the service's to write (the file too: LockFile).
		_ = fsperm.GiveToDirOwner(dir)
		return dirlock.LockFile(path, s.cfg.owner)
	}()
	if err != nil {
		s.log.Warn("cannot mark a profile run as this process's: a daemon started during it would take it for interrupted",
			zap.Int64("run", id), zap.Error(err))
		return
	}
	s.runsMu.Lock()
	s.runLocks[id] = f
	s.runsMu.Unlock()
}

// takeRunLock removes run id's lock file from those this process holds
// and returns it (nil when it holds none).
func (s *Store) takeRunLock(id int64) *os.File {
	s.runsMu.Lock()
	defer s.runsMu.Unlock()
	f := s.runLocks[id]
	delete(s.runLocks, id)
	return f
}

// holdsRun says whether this process holds run id's lock.
func (s *Store) holdsRun(id int64) bool {
	s.runsMu.Lock()
	defer s.runsMu.Unlock()
	_, ok := s.runLocks[id]
	return ok
}

// releaseRun lets run id's lock go and removes its file.
func (s *Store) releaseRun(id int64) {
	if f := s.takeRunLock(id); f != nil {
		_ = os.Remove(f.Name()) // before the close: no one takes a lock on a file about to go
		_ = f.Close()
	}
}

// leaveRun lets run id's lock go and keeps its file, which names this
// process as the one that left the run running.
func (s *Store) leaveRun(id int64) {
	if f := s.takeRunLock(id); f != nil {
		_ = f.Close()
	}
}

// runOwner says whether a process holds run id's lock (alive) and who
// last held it, as its file says ("" when no file names anyone).
func (s *Store) runOwner(id int64) (alive bool, who string) {
	alive, who, _ = dirlock.FileHolder(s.runLockPath(id))
	return alive, who
}

// leftMessage is the message of a run its process left.
func leftMessage(who string) string {
	if who == "" {
		who = "the process that ran it"
	}
	return fmt.Sprintf("interrupted: %s stopped during the run", who)
}

// removeLeftRunLocks removes the lock files nobody holds of runs that are
// no longer running: what processes that ended during a run left.
func (s *Store) removeLeftRunLocks(ctx context.Context) {
	names, err := filepath.Glob(filepath.Join(runLockDir(s.path), "*.lock"))
	if err != nil {
		return
	}
	for _, name := range names {
		id, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(name), ".lock"), 10, 64)
		if err != nil {
			continue
		}
		if alive, _ := s.runOwner(id); alive {
			continue
		}
		if run, err := s.Run(ctx, id); err == nil && run.Status == RunRunning {
			continue // started by a process that is taking its lock now
		}
		_ = os.Remove(name)
	}
}

// MeasuringInto names the processes measuring a profile run into the
// database at dbPath now ("gpuletd profile (pid 4242)"), by the run lock
// files they hold: what a restore must not take the database from under.
func MeasuringInto(dbPath string) []string {
	names, err := filepath.Glob(filepath.Join(runLockDir(dbPath), "*.lock"))
	if err != nil {
		return nil
	}
	var who []string
	for _, name := range names {
		if held, holder, _ := dirlock.FileHolder(name); held {
			who = append(who, cmp.Or(holder, "a process"))
		}
	}
	slices.Sort(who)
	return slices.Compact(who)
}

// OtherRun is a profile run another process is measuring now (`gpuletd
// profile` beside the daemon), and who.
type OtherRun struct {
	ProfileRun
	By string // as the process named itself (WithOwner)
}

// RunsOfOthers lists the runs other processes are measuring into this
// database now, oldest first: those running whose lock another process
// holds. The daemon's status says them, as a profile beside the serving
// gpu-lets slows them.
func (s *Store) RunsOfOthers(ctx context.Context) ([]OtherRun, error) {
	running, err := queryAll(ctx, s.reader(), "list running profile runs", scanRunRow,
		`SELECT `+runColumns+` FROM profile_runs WHERE status = 'running' ORDER BY id`)
	if err != nil {
		return nil, err
	}
	var out []OtherRun
	for _, run := range running {
		if alive, who := s.runOwner(run.ID); alive && !s.holdsRun(run.ID) {
			out = append(out, OtherRun{ProfileRun: run, By: cmp.Or(who, "another process")})
		}
	}
	return out, nil
}
