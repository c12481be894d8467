package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/gpulet"
)

// TestSurgeCheckPlansALoadFromItsOnset: a load that begins inside the surge
// check's second is judged, and planned for, at the first check after it
// filled a whole second, not for the share of the second it began in.
func TestSurgeCheckPlansALoadFromItsOnset(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	// A node that planned at its start, before any request: every model at
	// the minimum rate.
	plan := &gpulet.Plan{Algo: gpulet.AlgoGpuletInt, GPUs: []gpulet.GPUPlan{{ID: "emu0", GPULets: []gpulet.GPULet{
		{Size: 20, Models: []gpulet.Placement{{Name: "vgg19", Batch: 2, Rate: 1.2}}},
	}}}}
	start := at(-10 * time.Second) // long enough ago for a re-plan
	// load sends 40 req/s of vgg19 from from to to.
	load := func(n *node, from, to time.Duration) {
		for d := from; d < to; d += 25 * time.Millisecond {
			n.rates.hit("vgg19", at(d))
		}
	}
	tests := []struct {
		name   string
		onset  time.Duration
		checks []time.Duration // the surge checks, the last re-plans
		want   float64         // the rate it plans vgg19 for
	}{
		{name: "a load that began 0.4 s into the second", onset: 400 * time.Millisecond,
			checks: []time.Duration{time.Second, 2 * time.Second}, want: 40}, // its first second's count read 24
		{name: "a load that began at the second's opening", onset: 0,
			checks: []time.Duration{time.Second}, want: 40},
		{name: "a load that began 0.2 s before the check", onset: 800 * time.Millisecond,
			checks: []time.Duration{time.Second, 2 * time.Second}, want: 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := meteredNode(t0, plan)
			from := tt.onset
			for i, check := range tt.checks {
				load(n, from, check)
				from = check
				reason, rates := n.surgeCheck(at(check), start, start)
				if i < len(tt.checks)-1 {
					require.Empty(t, reason, "not judged at %v", check)
					continue
				}
				require.Equal(t, "rate of vgg19 surged", reason)
				require.InEpsilon(t, tt.want, rates["vgg19"], 0.01)
			}
		})
	}
}

// TestSurgeCheckJudgesAgainstTheFoldedEstimate: a plan made near the node's
// capacity assigns a model its estimate with no headroom; a second that
// counts 1.5 times that estimate is no surge over the estimate with the
// headroom asked for, and waits for the period, while twice it re-plans.
func TestSurgeCheckJudgesAgainstTheFoldedEstimate(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	plan := &gpulet.Plan{Algo: gpulet.AlgoGpuletInt, GPUs: []gpulet.GPUPlan{{ID: "emu0", GPULets: []gpulet.GPULet{
		{Size: 100, Models: []gpulet.Placement{{Name: "ssd", Batch: 28, Rate: 27}}},
	}}}}
	start := at(-30 * time.Second)
	for _, tt := range []struct {
		name   string
		second int // requests in the last second
		want   string
	}{
		{name: "1.5 times the estimate", second: 40},
		{name: "twice the estimate", second: 54, want: "rate of ssd surged"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := meteredNode(t0, plan)
			for i := range 540 { // 27 req/s over the first period
				n.rates.hit("ssd", at(time.Duration(i)*20*time.Second/540))
			}
			n.rates.closePeriod(at(20 * time.Second))
			n.rates.closeShort(at(20 * time.Second))
			for i := range tt.second {
				n.rates.hit("ssd", at(20*time.Second+time.Duration(i)*time.Second/time.Duration(tt.second)))
			}
			reason, _ := n.surgeCheck(at(21*time.Second), start, start)
			require.Equal(t, tt.want, reason)
		})
	}
}

// meteredNode is a node with plan in force and a rate meter started at t0,
// all a surge check reads; no gpu-let runs (the miss rule waits for one).
func meteredNode(t0 time.Time, plan *gpulet.Plan) *node {
	n := &node{log: zap.NewNop(), catalog: &catalog{}, rates: newRateMeter(0.5, t0), sup: &supervisor{running: map[string]*gpuletRun{}}}
	n.current.Store(&planned{plan: plan})
	return n
}

// TestSurgeCheckWaitsForALiveProfile: traffic to a model that waits for its
// live profile is no surge while the plan cannot place it, and the other
// models stay where they are; a model measured again, which the plan
// places on its held profile, surges as any other.
func TestSurgeCheckWaitsForALiveProfile(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	start := at(-10 * time.Second)
	lenet := gpulet.Placement{Name: "lenet5", Batch: 8, Rate: 960}
	for _, tt := range []struct {
		name   string
		placed []gpulet.Placement // beside lenet5
		queued bool               // resnet18 waits for a live profile
		want   string
	}{
		{name: "being profiled and not placed", queued: true},
		{name: "not placed and not being profiled", want: "rate of resnet18 surged"},
		{name: "measured again, placed on its held profile", queued: true,
			placed: []gpulet.Placement{{Name: "resnet18", Batch: 2, Rate: 1.2}}, want: "rate of resnet18 surged"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plan := &gpulet.Plan{Algo: gpulet.AlgoGpuletInt, GPUs: []gpulet.GPUPlan{{ID: "emu0", GPULets: []gpulet.GPULet{
				{Size: 100, Models: append([]gpulet.Placement{lenet}, tt.placed...)},
			}}}}
			n := meteredNode(t0, plan)
			n.live = newLiveProfiles()
			if tt.queued {
				require.True(t, n.live.ask(&repository.Model{Name: "resnet18"}))
			}
			for i := range 200 { // 200 req/s over the check's second
				n.rates.hit("resnet18", at(time.Duration(i)*time.Second/200))
			}
			reason, _ := n.surgeCheck(at(time.Second), start, start)
			require.Equal(t, tt.want, reason)
		})
	}
}
