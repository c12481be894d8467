package daemon

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/profiler/store"
)

// A database whose write lock another process holds past the busy timeout
// (a sqlite3 shell left inside BEGIN IMMEDIATE): the event that finds it is
// kept in memory, later events are kept without waiting on the lock again,
// the status says why and what to do, and once the lock is free the store
// watch saves them all in order.
func TestEventsOfALockedStoreAreKeptAndSavedInOrder(t *testing.T) {
	ctx := context.Background()
	n, st, release := lockedStoreNode(t)
	e := n.events
	failures := st.WriteFailures()
	require.Positive(t, failures)
	e.add(EventPlan, store.SeverityWarning, "while locked", nil)
	require.Equal(t, failures, st.WriteFailures(), "an event does not try a store known not to take writes")
	kept := e.pending()
	require.Len(t, kept, 2)
	require.Equal(t, "finds the lock", kept[0].Message)
	require.Equal(t, "while locked", kept[1].Message)
	require.Equal(t, map[eventCount]int64{{EventPlan, store.SeverityInfo}: 2, {EventPlan, store.SeverityWarning}: 1}, e.counted())

	s := n.storeStatus()
	require.False(t, s.Writable)
	require.Equal(t, 2, s.UnsavedEvents)
	require.Contains(t, s.Reason, "database is busy")
	require.Contains(t, s.Reason, "end the write transaction the other process holds open")
	require.False(t, n.tryStore(ctx), "the lock is still held")

	release()
	require.True(t, n.tryStore(ctx))
	require.Empty(t, e.pending())
	e.add(EventPlan, store.SeverityInfo, "after", nil)
	require.Equal(t, []string{"before", "finds the lock", "while locked", "after"}, savedMessages(t, st))
}

// A daemon that stops while its events wait in memory for a lock that was
// let go since the store watch last tried saves them with its stop.
func TestEventsKeptAreSavedAtTheStop(t *testing.T) {
	n, st, release := lockedStoreNode(t)
	release()
	n.events.recordStop("v", time.Now().Add(-time.Minute), time.Now(), nil, nil)
	require.Empty(t, n.events.pending())
	require.Equal(t, []string{"before", "finds the lock", "gpuletd stopped after 1m0s"}, savedMessages(t, st))
}

// lockedStoreNode is a node whose store another connection has locked
// (here one of this process, which SQLite locks out as it does another
// process) past the busy timeout, after an event "before" was saved and
// while an event "finds the lock" was recorded; release lets the lock go.
func lockedStoreNode(t *testing.T) (n *node, st *store.Store, release func()) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "g.db")
	st, err := store.Open(context.Background(), path, store.WithBusyTimeout(100*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	n = &node{log: zap.NewNop(), st: st, events: newEvents(st, zap.NewNop()), catalog: &catalog{st: st, log: zap.NewNop()}}
	cfg := config.Default()
	n.cfg.Store(&cfg)
	n.events.add(EventPlan, store.SeverityInfo, "before", nil)
	other, err := sql.Open("sqlite3", "file:"+path+"?_txlock=immediate")
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Close() })
	tx, err := other.Begin()
	require.NoError(t, err)
	n.events.add(EventPlan, store.SeverityInfo, "finds the lock", nil)
	require.Len(t, n.events.pending(), 1)
	return n, st, func() { require.NoError(t, tx.Rollback()) }
}

// savedMessages are the messages of the events st holds, oldest first.
func savedMessages(t *testing.T, st *store.Store) []string {
	t.Helper()
	evs, err := st.Events(context.Background(), 0, 0)
	require.NoError(t, err)
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Message)
	}
	return got
}
