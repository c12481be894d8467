package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// storeCheckPeriod is how often the daemon looks whether its store can be
// written, and tries to make it writable again when it cannot.
const storeCheckPeriod = 2 * time.Second

// storeStatus is the store's state in GET /api/v1/status.
type storeStatus struct {
	Path     string `json:"path"`
	Writable bool   `json:"writable"`
	// Reason says why writes fail and what the daemon does meanwhile.
	Reason        string `json:"reason,omitempty"`
	WriteFailures int64  `json:"write_failures"`
	UnsavedEvents int    `json:"unsaved_events,omitempty"`
}

func (n *node) storeStatus() storeStatus {
	ok, why := n.st.Writable()
	s := storeStatus{Path: n.st.Path(), Writable: ok, WriteFailures: n.st.WriteFailures(), UnsavedEvents: len(n.events.pending())}
	if !ok {
		s.Reason = "the database cannot be written (" + why.Error() + "): serving read-only from the profiles and models it holds; " +
			"events are kept in memory, and plans and new profiles are not saved until it can be written again (" + storeRemedy(why, filepath.Dir(n.st.Path())) + ")"
	}
	return s
}

// storeRemedy says what makes a store that cannot be written writable
// again, from why its writes fail.
func storeRemedy(why error, dir string) string {
	switch {
	case errors.Is(why, store.ErrPermission):
		return "let the daemon's user write its files, as said above"
	case errors.Is(why, store.ErrReadOnlyFS):
		return "mount its file system read-write" + writeHint(why, dir)
	case errors.Is(why, store.ErrBusy):
		// Another process held the write lock past the busy timeout: a
		// sqlite3 shell left inside BEGIN, or a tool copying the file
		// with a write transaction open. The error names it where the
		// kernel lists it (store.WriteLockHolders).
		return "end the write transaction the other process holds open, or stop it: the daemon writes again within seconds"
	default:
		return "free space on its disk"
	}
}

// watchStore follows whether the store can be written: it records the
// change both ways and, while it cannot, retries the writes the daemon
// owes it (the writer itself, events kept in memory, the models and the
// plan in force).
func (n *node) watchStore(ctx context.Context) {
	t := time.NewTicker(storeCheckPeriod)
	defer t.Stop()
	wasOK, _ := n.st.Writable()
	if !wasOK {
		n.storeLost()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ok, _ := n.st.Writable()
		if !ok || len(n.events.pending()) > 0 {
			ok = n.tryStore(ctx)
		}
		switch {
		case wasOK && !ok:
			n.storeLost()
		case !wasOK && ok:
			n.events.add(EventStore, store.SeverityInfo, "the database can be written again: events kept in memory, models and the plan in force are saved", nil)
			n.profileOwed(ctx)
		}
		wasOK = ok
	}
}

// storeLost says, wherever an operator looks, that the store cannot be
// written.
func (n *node) storeLost() {
	st := n.storeStatus()
	n.events.add(EventStore, store.SeverityError, st.Reason, map[string]string{"path": st.Path})
}

// tryStore makes the store writable again if it can and saves what was owed
// to it; it tells whether the store can be written now.
func (n *node) tryStore(ctx context.Context) bool {
	if err := n.st.Recover(ctx); err != nil {
		n.log.Debug("store still cannot be written", zap.Error(err))
		return false
	}
	if err := n.events.flush(); err != nil {
		return false
	}
	n.catalog.recordAll(ctx)
	if cur := n.current.Load(); cur != nil {
		n.savePlan(ctx, cur.plan, cur.reason)
	}
	ok, _ := n.st.Writable()
	return ok
}

// profileOwed queues for a profile the models that still lack one once the
// store can be written again: their profiles could not be stored meanwhile
// (a first start on a database the daemon may not write fails every
// profile), and nothing else would measure them again before a reload.
func (n *node) profileOwed(ctx context.Context) {
	for _, m := range n.catalog.all() {
		if !n.live.pending(m.Name) {
			n.profileLater(ctx, m)
		}
	}
}
