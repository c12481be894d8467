package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/profiler/store"
)

// lastRun is what state_dir's database says of the daemon's last run: its
// newest start or stop, and the newest event of all.
type lastRun struct {
	path  string       // the database
	held  bool         // a process holds state_dir: a daemon runs on it
	run   *store.Event // the newest daemon_start or daemon_stop; nil: none
	event *store.Event // the newest event
}

// readLastRun reads how the daemon's last run ended from the configured
// state_dir's database, for a command that found no daemon answering. An
// error when the database cannot be read; run nil when it holds no start
// or stop (nothing served from there, or a release that recorded none).
func (g *globalFlags) readLastRun(ctx context.Context) (lastRun, error) {
	var r lastRun
	path, err := withStateDir(g, func(path string, alone bool) error {
		r.held = !alone
		return store.ReadFile(ctx, path, alone, func(st *store.Store) error {
			runs, err := st.LatestEventsMatching(ctx, 1, store.EventFilter{Kinds: []string{daemon.EventDaemonStart, daemon.EventDaemonStop}})
			if err != nil || len(runs) == 0 {
				return err
			}
			r.run = &runs[0]
			latest, err := st.LatestEvents(ctx, 1)
			if err == nil && len(latest) > 0 {
				r.event = &latest[0]
			}
			return err
		})
	})
	r.path = path
	return r, err
}

// words says how the last run ended, in a line that follows "no gpuletd
// answers at base: is it running?"; "" when the database told nothing.
func (r lastRun) words(base string) string {
	if r.held {
		// Its start may not be recorded yet: the newest start in the
		// database can be the run before it.
		return fmt.Sprintf("a gpuletd holds its state_dir (%s) but does not answer at %s: "+
			"it is still starting, hung, or listens elsewhere (its log may say which)", filepath.Dir(r.path), base)
	}
	if r.run == nil {
		return ""
	}
	at := func(e *store.Event) string { return e.At.Local().Format(time.DateTime) }
	if r.run.Kind == daemon.EventDaemonStop {
		return fmt.Sprintf("its database (%s) says: %s %s; gpuletd events shows what came before", r.path, at(r.run), r.run.Message)
	}
	last := r.run
	if r.event != nil && r.event.ID > r.run.ID {
		last = r.event
	}
	how, hint := daemon.HowRunEnded(*r.run)
	return fmt.Sprintf("its database (%s) says: gpuletd %s (pid %s) started at %s and recorded no stop: %s, "+
		"after its last event, at %s: %s: %s (%s; gpuletd events shows what came before)",
		r.path, r.run.Attrs["version"], r.run.Attrs["pid"], at(r.run), how, at(last), last.Kind, last.Message, hint)
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
