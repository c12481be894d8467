package daemon

import (
	"context"
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

// A daemon that starts again reads back the last hour's warnings and
// errors from the store: a restart does not hide them from the status.
// Older ones and infos stay out.
func TestRecentProblemsSurviveARestart(t *testing.T) {
	ctx := context.Background()
	_, st := historyNode(t)
	now := time.Now()
	for _, ev := range []store.Event{
		{At: now.Add(-2 * time.Hour), Kind: EventStore, Severity: store.SeverityError, Message: "long ago"},
		{At: now.Add(-50 * time.Minute), Kind: EventExecutorRestart, Severity: store.SeverityWarning, Message: "w"},
		{At: now.Add(-40 * time.Minute), Kind: EventPlan, Severity: store.SeverityInfo, Message: "i"},
		{At: now.Add(-30 * time.Minute), Kind: EventStore, Severity: store.SeverityError, Message: "e"},
	} {
		_, err := st.AppendEvent(ctx, ev)
		require.NoError(t, err)
	}
	e := newEvents(st, zap.NewNop())
	require.Equal(t, recentProblems{Window: "1h0m0s"}, e.recent(now), "nothing before it is read back")
	require.NoError(t, e.recallProblems(ctx, now))
	require.Equal(t, recentProblems{Window: "1h0m0s", Warnings: 1, Errors: 1}, e.recent(now))
	e.add(EventPlan, store.SeverityWarning, "after the start", nil)
	require.Equal(t, recentProblems{Window: "1h0m0s", Warnings: 2, Errors: 1}, e.recent(time.Now()))
	require.Equal(t, recentProblems{Window: "1h0m0s", Warnings: 1}, e.recent(now.Add(35*time.Minute)),
		"the recalled ones leave the window as their hour ends")
	require.Equal(t, map[eventCount]int64{{EventPlan, store.SeverityWarning}: 1}, e.counted(),
		"the metrics count this daemon's events alone (a counter starts at zero)")
}
