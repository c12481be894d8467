package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/profiler/store"
)

// lastRun is what state_dir's database says of the daemon's last run.
type lastRun struct {
	path  string // the database
	held  bool   // a process holds state_dir: a daemon runs on it
	ended string // how the last run ended (daemon.LastRun); "": untold
}

// readLastRun reads how the daemon's last run ended from the configured
// state_dir's database, for a command that found no daemon answering; an
// error when the database cannot be read.
func (g *globalFlags) readLastRun(ctx context.Context) (lastRun, error) {
	var r lastRun
	path, err := withStateDir(g, func(path string, alone bool) error {
		r.held = !alone
		return store.ReadFile(ctx, path, alone, func(st *store.Store) error {
			var err error
			r.ended, err = daemon.LastRun(ctx, st)
			return err
		})
	})
	r.path = path
	return r, err
}

// words says how the last run ended, in a line that follows "no gpuletd
// answers at base: is it running?"; "" when the database told nothing.
func (r lastRun) words(base string) string {
	switch {
	case r.held:
		// Its start may not be recorded yet: the newest start in the
		// database can be the run before it.
		return fmt.Sprintf("a gpuletd holds its state_dir (%s) but does not answer at %s: "+
			"it is still starting, hung, or listens elsewhere (its log may say which)", filepath.Dir(r.path), base)
	case r.ended == "":
		return ""
	}
	return fmt.Sprintf("its database (%s) says: %s; gpuletd events shows what came before", r.path, r.ended)
}

// failWithLastRun is d.fail(err) and, when nothing answered at the
// configured address (no --url, no service configured elsewhere), a line
// on how the daemon's last run ended, from state_dir's database: as
// systemctl status says when and how a unit stopped.
func (g *globalFlags) failWithLastRun(ctx context.Context, d *daemonAPI, url string, err error) error {
	failed := d.fail(err)
	var ex *exitError
	if url != "" || !errors.As(failed, &ex) || !strings.HasPrefix(ex.msg, "no gpuletd answers at ") || d.serviceHint() != "" {
		return failed
	}
	if r, rerr := g.readLastRun(ctx); rerr == nil {
		if w := r.words(d.base); w != "" {
			ex.msg += "\n" + w
		}
	}
	return failed
}
