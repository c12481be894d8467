package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The busy share is that of the last ten seconds, whatever the executor
// did before: busy for an hour then idle reads 0 once the window has
// passed, and a load taken an hour after the start reads as it runs.
func TestBusyShareIsOfTheLastWindow(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	type push struct {
		at, busy float64 // seconds from t0
	}
	// pushes every half second of a gpu-let busy share f from a to b.
	run := func(a, b, f, busyBefore float64) []push {
		var ps []push
		for s := a + 0.5; s <= b+1e-9; s += 0.5 {
			ps = append(ps, push{s, busyBefore + f*(s-a)})
		}
		return ps
	}
	cases := []struct {
		name   string
		pushes []push
		now    float64
		want   float64
	}{
		{"no push but the start's", nil, 3, 0},
		{"half busy since a start 4 s ago", run(0, 4, 0.5, 0), 4, 0.5},
		{"busy 90% for an hour, idle for a minute since", run(0, 3600, 0.9, 0), 3660, 0},
		{"busy 90% for an hour, idle for 5 s since", run(0, 3600, 0.9, 0), 3605, 0.45},
		{"idle for an hour, then 80% busy for 20 s", append([]push{{1, 0}}, run(3600, 3620, 0.8, 0)...), 3620, 0.8},
		{"idle for an hour, then 80% busy for 4 s", append([]push{{1, 0}}, run(3600, 3604, 0.8, 0)...), 3604, 0.32},
		{"busy 20%, then 100% for the last 10 s", append(run(0, 600, 0.2, 0), run(600, 610, 1, 120)...), 610, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var h busyHistory
			h.add(t0, t0, 0)
			latest := busySample{at: t0}
			for _, p := range tc.pushes {
				latest = busySample{at: at(p.at), busy: time.Duration(p.busy * float64(time.Second))}
				h.add(t0, latest.at, latest.busy)
			}
			got, ok := h.ratio(at(tc.now), latest)
			require.True(t, ok)
			require.InDelta(t, tc.want, got, 0.06)
		})
	}
	// Busy to the end of a push that was not kept as a sample, then idle
	// for longer than the window: exactly 0.
	var idle busyHistory
	idle.add(t0, t0, 0)
	for s := 1; s <= 60; s++ {
		idle.add(t0, at(float64(s)), time.Duration(s)*time.Second/2)
	}
	last := busySample{at: at(60.5), busy: 30250 * time.Millisecond}
	idle.add(t0, last.at, last.busy)
	got, ok := idle.ratio(at(75), last)
	require.True(t, ok)
	require.Zero(t, got)

	var h busyHistory
	_, ok = h.ratio(t0, busySample{at: t0})
	require.False(t, ok, "nothing pushed yet")
	// Another executor's state begins the history anew.
	h.add(t0, at(100), 90*time.Second)
	h.add(at(200), at(201), 0)
	got, ok = h.ratio(at(202), busySample{at: at(201), busy: 0})
	require.True(t, ok)
	require.Zero(t, got)
}
