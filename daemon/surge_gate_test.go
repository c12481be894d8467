package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
)

// TestPauseWatch: a watch tick taken more than pauseLate after it was due
// finds the daemon ran again then.
func TestPauseWatch(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	var w pauseWatch
	w.observe(t0, t0.Add(pauseLate))
	require.True(t, w.last().IsZero(), "on time")
	w.observe(t0.Add(time.Second), t0.Add(1800*time.Millisecond))
	require.Equal(t, t0.Add(1800*time.Millisecond), w.last())
	w.observe(t0.Add(2*time.Second), t0.Add(2*time.Second))
	require.Equal(t, t0.Add(1800*time.Millisecond), w.last(), "the last pause stays")
}

// TestSurgeGate: a surge window open while the daemon ran again after a
// pause, and read what waited in its sockets, is not judged (at most two in
// a row); the miss rule forgets its counts at every check within missQuiet
// of the pause.
func TestSurgeGate(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type check struct {
		resumed, at   time.Time // the last pause's end; the check's time
		judge, forget bool
	}
	for _, tc := range []struct {
		name   string
		checks []check
	}{
		{"never paused", []check{{at: ms(1000), judge: true}, {at: ms(2000), judge: true}}},
		{"a pause", []check{
			{at: ms(1000), judge: true},
			{resumed: ms(1800), at: ms(2000), forget: true},
			{resumed: ms(1800), at: ms(3000), forget: true}, // opened 0.2 s after it
			{resumed: ms(1800), at: ms(4000), judge: true},  // 2.2 s after it
		}},
		{"a pause the watch finds after the check", []check{
			{at: ms(1000), judge: true},
			{at: ms(2600), judge: true}, // opened before the pause: all of its requests
			{resumed: ms(2602), at: ms(3000), forget: true},
			{resumed: ms(2602), at: ms(4000), judge: true, forget: true},
		}},
		{"paused before every check", []check{
			{resumed: ms(900), at: ms(1000), forget: true},
			{resumed: ms(1900), at: ms(2000), forget: true},
			{resumed: ms(2900), at: ms(3000), judge: true, forget: true},
			{resumed: ms(3900), at: ms(4000), forget: true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g surgeGate
			for _, c := range tc.checks {
				judge, forget := g.pass(c.resumed, c.at)
				require.Equal(t, []bool{c.judge, c.forget}, []bool{judge, forget}, "the check at %v", c.at.Sub(t0))
			}
		})
	}
}

// TestADaemonStoppedReadsNoSurgeAndNoMisses: a steady 100 req/s of a model
// planned at 120 while the daemon stops from 1.6 s to 2.6 s: the second's
// requests are read at once when it runs again, after the check due at 2 s
// ran late, and those of them that missed are tallied then; the pause
// watch finds the pause as that check runs, or just after. Through the
// gate the node neither sees a surge nor re-plans for the misses; closing
// every window as it comes, it read a surge (350 req/s over 2.6–3 s), and
// the next check the stop's misses as the plan's.
func TestADaemonStoppedReadsNoSurgeAndNoMisses(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for _, tc := range []struct {
		name       string
		gated      bool
		watchAfter bool     // the watch finds the pause after the check due at 2 s ran
		reasons    []string // at the checks at 3, 4 and 5 s
	}{
		{"through the gate", true, false, []string{"", "", ""}},
		{"through the gate, the pause found after the check", true, true, []string{"", "", ""}},
		{"every window closed", false, false, []string{"rate of a surged", // and had it not re-planned:
			"a missed its SLO 100 times in 300 (33.3%) on the plan in force; planned with 25% more headroom", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			let := gpulet.GPULet{Size: 100, Models: []gpulet.Placement{{Name: "a", Batch: 8, Rate: 120}}}
			plan := &gpulet.Plan{Algo: gpulet.AlgoGpuletInt, GPUs: []gpulet.GPUPlan{{ID: "emu0", GPULets: []gpulet.GPULet{let}}}}
			n := meteredNode(t0, plan)
			n.sup.running["x1"] = &gpuletRun{device: mps.Device{ID: "emu0"}, planned: let,
				models: map[string]*pb.LoadModelRequest{"a": {Name: "a"}}}
			start := at(-time.Minute)
			// serve counts requests of a read at read, every 10 ms from
			// from to to (exclusive), missed ones of them among them.
			serve := func(from, to, read time.Duration, missed bool) {
				for d := from; d < to; d += 10 * time.Millisecond {
					r := read
					if r == 0 {
						r = d
					}
					n.rates.hit("a", at(r))
					n.counters.of("a").miss.add(missed)
				}
			}
			var g surgeGate
			var w pauseWatch
			check := func(due, ran time.Duration) string {
				var reason string
				if tc.gated {
					if !tc.watchAfter {
						w.observe(at(due), at(ran)) // the watch's tick due with the check
					}
					reason, _ = n.gatedSurgeCheck(&g, w.last(), at(ran), start, start)
				} else {
					reason, _ = n.surgeCheck(at(ran), start, start)
				}
				return reason
			}
			serve(0, time.Second, 0, false)
			require.Empty(t, check(time.Second, time.Second), "the miss rule starts counting")
			serve(time.Second, 1600*time.Millisecond, 0, false)
			require.Empty(t, check(2*time.Second, 2600*time.Millisecond), "the check due at 2 s, run as the daemon runs again")
			serve(1600*time.Millisecond, 2600*time.Millisecond, 2601*time.Millisecond, true) // the stop's second, read late, missed
			if tc.watchAfter {
				w.observe(at(1750*time.Millisecond), at(2602*time.Millisecond))
			}
			serve(2600*time.Millisecond, 3*time.Second, 0, false)
			var got []string
			got = append(got, check(3*time.Second, 3*time.Second))
			serve(3*time.Second, 4*time.Second, 0, false)
			got = append(got, check(4*time.Second, 4*time.Second))
			serve(4*time.Second, 5*time.Second, 0, false)
			got = append(got, check(5*time.Second, 5*time.Second))
			require.Equal(t, tc.reasons, got)
		})
	}
}
