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

// A database whose write lock another connection holds past the busy
// timeout (a sqlite3 shell left inside BEGIN IMMEDIATE; here a connection
// of this process, which SQLite locks out alike): the event that finds it
// is kept in memory, later events are kept without waiting on the lock
// again, the status says why and what to do, and once the lock is free the
// store watch saves them all in order.
func TestEventsOfALockedStoreAreKeptAndSavedInOrder(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	st, err := store.Open(ctx, path, store.WithBusyTimeout(100*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	n := &node{log: zap.NewNop(), st: st, events: newEvents(st, zap.NewNop()), catalog: &catalog{st: st, log: zap.NewNop()}}
	cfg := config.Default()
	n.cfg.Store(&cfg)
	e := n.events

	e.add(EventPlan, store.SeverityInfo, "before", nil)
	other, err := sql.Open("sqlite3", "file:"+path+"?_txlock=immediate")
	require.NoError(t, err)
	defer other.Close()
	tx, err := other.Begin()
	require.NoError(t, err)

	e.add(EventPlan, store.SeverityInfo, "finds the lock", nil)
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

	require.NoError(t, tx.Rollback())
	require.True(t, n.tryStore(ctx))
	require.Empty(t, e.pending())
	e.add(EventPlan, store.SeverityInfo, "after", nil)
	evs, err := st.Events(ctx, 0, 0)
	require.NoError(t, err)
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Message)
	}
	require.Equal(t, []string{"before", "finds the lock", "while locked", "after"}, got)
}
