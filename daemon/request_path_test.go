package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/mps"
)

func TestPathCost(t *testing.T) {
	ms := time.Millisecond
	prev := pathSample{daemonCPU: 100 * ms, answered: 1000, lets: map[string]letSample{
		"cpu-50-1": {started: 1, sent: 500, busy: 40 * ms, cpu: 90 * ms},
		"cpu-50-2": {started: 7, sent: 900, busy: 10 * ms, cpu: 20 * ms},
		"cpu-50-3": {started: 3, sent: 100, busy: 0, cpu: 5 * ms},
	}}
	for _, tc := range []struct {
		name                   string
		cur                    pathSample
		daemon, executors      time.Duration
		wantAnswered, wantSent int64
	}{{
		name: "the daemon per request it answered, the executors beyond their batches per request the daemon sent them",
		cur: pathSample{daemonCPU: 300 * ms, answered: 3000, lets: map[string]letSample{
			// 1 000 more sent; 100 ms more CPU of which 60 ms batches.
			"cpu-50-1": {started: 1, sent: 1500, busy: 100 * ms, cpu: 190 * ms},
			// 1 000 more sent; 40 ms more CPU of which 20 ms batches.
			"cpu-50-2": {started: 7, sent: 1900, busy: 30 * ms, cpu: 60 * ms},
		}},
		daemon: 100 * time.Microsecond, executors: 30 * time.Microsecond, wantAnswered: 2000, wantSent: 2000,
	}, {
		name: "a new executor and a new gpu-let start their counts again: left out",
		cur: pathSample{daemonCPU: 200 * ms, answered: 2000, lets: map[string]letSample{
			"cpu-50-1": {started: 2, sent: 800, busy: 50 * ms, cpu: 900 * ms},
			"cpu-50-4": {started: 5, sent: 800, busy: 50 * ms, cpu: 900 * ms},
			"cpu-50-2": {started: 7, sent: 1900, busy: 30 * ms, cpu: 60 * ms},
		}},
		daemon: 100 * time.Microsecond, executors: 20 * time.Microsecond, wantAnswered: 1000, wantSent: 1000,
	}, {
		name: "batches that took longer than the CPU read (a preempted run) count no less than nothing",
		cur: pathSample{daemonCPU: 100 * ms, answered: 1500, lets: map[string]letSample{
			"cpu-50-2": {started: 7, sent: 1400, busy: 90 * ms, cpu: 30 * ms},
		}},
		daemon: 0, executors: 0, wantAnswered: 500, wantSent: 500,
	}, {
		name:         "nothing answered: nothing to say",
		cur:          pathSample{daemonCPU: 500 * ms, answered: 1000},
		wantAnswered: 0, wantSent: 0,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			daemon, executors, answered, sent := pathCost(prev, tc.cur)
			require.Equal(t, tc.daemon, daemon)
			require.Equal(t, tc.executors, executors)
			require.Equal(t, tc.wantAnswered, answered)
			require.Equal(t, tc.wantSent, sent)
		})
	}
}

// pathPeriods builds samples a period apart, each answering answered more
// requests, of which sent went to one CPU gpu-let, at daemonUS and execUS of
// CPU each beyond their batches.
func pathPeriods(answered, sent int64, daemonUS, execUS []float64) []pathSample {
	var out []pathSample
	s := pathSample{at: time.Unix(0, 0), lets: map[string]letSample{"cpu-50-1": {started: 1}}}
	out = append(out, s)
	for i := range daemonUS {
		l := s.lets["cpu-50-1"]
		l.sent += sent
		l.busy += 10 * time.Millisecond
		l.cpu += 10*time.Millisecond + time.Duration(execUS[i]*float64(sent))*time.Microsecond
		s = pathSample{at: s.at.Add(20 * time.Second), answered: s.answered + answered,
			daemonCPU: s.daemonCPU + time.Duration(daemonUS[i]*float64(answered))*time.Microsecond,
			lets:      map[string]letSample{"cpu-50-1": l}}
		out = append(out, s)
	}
	return out
}

func TestRequestPathObserve(t *testing.T) {
	for _, tc := range []struct {
		name              string
		answered, sent    int64
		daemonUS, execUS  []float64
		moved             []bool
		wantDaemon, wantX float64 // 0, 0: nothing kept
	}{{
		name:     "the first figure moves; the median of three leaves a reload's period out",
		answered: 2000, sent: 2000,
		daemonUS: []float64{200, 210, 190, 220}, execUS: []float64{80, 350, 70, 72},
		moved:      []bool{true, false, false, false},
		wantDaemon: 210, wantX: 72,
	}, {
		name:     "a lasting change past pathMove moves",
		answered: 2000, sent: 2000,
		daemonUS: []float64{200, 200, 200, 200}, execUS: []float64{60, 60, 120, 120},
		moved:      []bool{true, false, false, true},
		wantDaemon: 200, wantX: 120,
	}, {
		name:     "periods of fewer than minPathRequests requests keep nothing",
		answered: minPathRequests - 1, sent: minPathRequests - 1,
		daemonUS: []float64{5000, 5000}, execUS: []float64{900, 900},
		moved: []bool{false, false},
	}, {
		name:     "few on the CPU: the daemon's share alone, and no plan moves",
		answered: 5000, sent: 10,
		daemonUS: []float64{150, 170}, execUS: []float64{900, 900},
		moved:      []bool{false, false},
		wantDaemon: 150,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var r requestPath
			samples := pathPeriods(tc.answered, tc.sent, tc.daemonUS, tc.execUS)
			require.False(t, r.observe(samples[0]), "the first sample only starts a period")
			var moved []bool
			for _, s := range samples[1:] {
				moved = append(moved, r.observe(s))
			}
			require.Equal(t, tc.moved, moved)
			got := r.get()
			if tc.wantDaemon == 0 && tc.wantX == 0 {
				require.Nil(t, got)
				require.Zero(t, r.executorMS())
				return
			}
			require.NotNil(t, got)
			require.InDelta(t, tc.wantDaemon, got.DaemonUS, 0.01)
			if tc.wantX == 0 {
				require.Nil(t, got.ExecutorsUS, "not measured, not 0")
			} else {
				require.NotNil(t, got.ExecutorsUS)
				require.InDelta(t, tc.wantX, *got.ExecutorsUS, 0.01)
			}
			require.InDelta(t, tc.wantDaemon+tc.wantX, got.PerRequestUS, 0.02)
			require.InDelta(t, tc.wantX/1000, r.executorMS(), 1e-5)
			require.Equal(t, samples[len(samples)-1].at, got.At)
		})
	}
}

// The CPU's plans add the executors' measured CPU per request to every
// request of a batch, and the capacity measured after a plan says what it
// counted; other devices' profiles are planned with as measured.
func TestTheCPUsPlansCountTheExecutorsPath(t *testing.T) {
	ctx := context.Background()
	n, m, cpu := mlpOnTheCPU(t)

	latency4 := func() float64 {
		in, missing := n.planInput(ctx, map[string]float64{"mlp": 100})
		require.Empty(t, missing)
		require.Len(t, in.Demands, 1)
		ms, ok := in.Demands[0].Profile.Latency(4, 100)
		require.True(t, ok)
		return ms
	}
	capacity := func() *capacityStatus {
		in, _ := n.planInput(ctx, map[string]float64{"mlp": 100})
		n.measureCapacity(ctx, in)
		c := n.capacity.get()
		require.NotNil(t, c)
		require.True(t, c.CPU)
		return c
	}
	require.InDelta(t, 8.0, latency4(), 1e-9, "nothing measured: the profile as measured")
	before := capacity()
	require.Zero(t, before.ExecutorPathUS)
	require.Zero(t, before.DaemonPathUS)

	for _, s := range pathPeriods(2000, 2000, []float64{300}, []float64{500}) {
		n.path.observe(s)
	}
	require.InDelta(t, 8.0+4*0.5, latency4(), 1e-9, "0.5 ms more for each of the batch's requests")
	after := capacity()
	require.Equal(t, 500.0, after.ExecutorPathUS)
	require.Equal(t, 300.0, after.DaemonPathUS)
	require.Less(t, after.Ratio, before.Ratio, "the planner places less where each request costs more")

	p, err := n.book.profile(ctx, m, cpu)
	require.NoError(t, err)
	emulated := cpu
	emulated.Kind = mps.KindEmulated
	require.Same(t, p, n.planningProfile(p, emulated), "a GPU's executors read and write off the device")
	got, _ := n.planningProfile(p, cpu).Latency(1, 100)
	require.InDelta(t, 2.5, got, 1e-9)
}
