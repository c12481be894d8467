package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/profiler/store"
)

// The status counts the warnings and errors of the last hour: older ones
// drop out, infos never count.
func TestRecentProblems(t *testing.T) {
	_, st := historyNode(t)
	e := newEvents(st, zap.NewNop())
	t0 := time.Now()
	require.Equal(t, recentProblems{Window: "1h0m0s"}, e.recent(t0))
	e.add(EventPlan, store.SeverityWarning, "w1", nil)
	e.add(EventPlan, store.SeverityInfo, "i", nil)
	e.add(EventStore, store.SeverityError, "e1", nil)
	e.add(EventPlan, store.SeverityWarning, "w2", nil)
	require.Equal(t, recentProblems{Window: "1h0m0s", Warnings: 2, Errors: 1}, e.recent(time.Now()))
	require.Equal(t, map[eventCount]int64{{EventPlan, store.SeverityWarning}: 2, {EventPlan, store.SeverityInfo}: 1, {EventStore, store.SeverityError}: 1},
		e.counted(), "the metrics' count, by kind and severity")
	require.Equal(t, recentProblems{Window: "1h0m0s"}, e.recent(time.Now().Add(problemWindow+time.Second)), "an hour later none is recent")
	e.mu.Lock()
	require.Empty(t, e.problems, "and they are forgotten")
	e.mu.Unlock()
}
