package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/sim/arrival"
	"github.com/gpulet/gpuletd/sim/workload"
	"github.com/stretchr/testify/require"
)

func TestDeterminism(t *testing.T) {
	w := load(t, "reorganize.yaml")
	a, err := Run(context.Background(), w, Options{})
	require.NoError(t, err)
	b, err := Run(context.Background(), w, Options{})
	require.NoError(t, err)
	require.Equal(t, a, b, "same workload, same seed: same result")
	require.NotZero(t, a.Good)

	c, err := Run(context.Background(), w, Options{Seed: 99})
	require.NoError(t, err)
	require.NotEqual(t, a.Requests, c.Requests, "another seed draws other arrivals")
}

func TestConservation(t *testing.T) {
	tests := []struct {
		name string
		file string
		edit func(w *workload.Workload)
		opts Options
	}{
		{"reorganizing deferred", "reorganize.yaml", nil, Options{}},
		{"reorganizing eager", "reorganize.yaml", nil, Options{Policy: "eager"}},
		{"timeout", "reorganize.yaml", nil, Options{Policy: "timeout:5ms"}},
		{"flex with preemption", "reorganize.yaml", nil, Options{Policy: "flex:lambda=1.5"}},
		{"symphony's rule as published", "reorganize.yaml", nil, Options{Policy: "deferred:solo,headonly"}},
		{"overloaded, jitter 10%", "reorganize.yaml", func(w *workload.Workload) {
			w.Phases[0].Rates["resnet50"] = 9000
		}, Options{JitterCV: 0.1}},
		{"a model nobody serves", "reorganize.yaml", func(w *workload.Workload) {
			w.Devices[0].Count = 1
			w.Models = append(w.Models, workload.Model{Name: "vgg19", Rate: 500}, workload.Model{Name: "ssd", Rate: 500}, workload.Model{Name: "alexnet", Rate: 500})
		}, Options{Policy: "eager"}},
		{"staggering example", "stagger.yaml", nil, exact},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := load(t, tc.file)
			if tc.edit != nil {
				tc.edit(w)
			}
			res, _ := run(t, w, tc.opts) // run checks every request is answered exactly once
			require.NotZero(t, res.Requests)
			var good, late, rej uint64
			for _, m := range res.Models {
				good += m.Good
				late += m.Late
				for _, n := range m.Rejected {
					rej += n
				}
				require.Equal(t, m.Requests, m.Good+m.Late+sum64(m.Rejected), m.Name)
			}
			require.Equal(t, res.Good, good)
			require.Equal(t, res.Late, late)
			require.Equal(t, res.Rejections(), rej)
			var win uint64
			for _, x := range res.Windows {
				win += x.Requests
			}
			require.Equal(t, res.Requests, win, "every request in one window")
		})
	}
}

func sum64(m map[string]uint64) uint64 {
	var n uint64
	for _, v := range m {
		n += v
	}
	return n
}

// TestTieOrder checks the order of events at one instant: batch
// completions, control, arrivals, timers; the lower gpu-let first.
func TestTieOrder(t *testing.T) {
	at := ms(5)
	mk := func(done, ctl, arr, timer bool, twoDone bool) *engine {
		e := &engine{now: ms(1), set: settings{duration: time.Hour}, nextTick: never, nextSurge: never}
		l0 := &glet{idx: 0, wake: never}
		l1 := &glet{idx: 1, wake: never}
		e.lets = []*glet{l0, l1}
		if done {
			l1.busy, l1.end = true, at
			if twoDone {
				l0.busy, l0.end = true, at
			}
		}
		if timer {
			l0.wake = at
		}
		if ctl {
			e.nextTick = at
		}
		e.arr = &arrivals{}
		if arr {
			e.arr.h = []*stream{{model: 0, next: at}}
		}
		return e
	}
	tests := []struct {
		name                           string
		done, ctl, arr, timer, twoDone bool
		kind, let                      int
	}{
		{"completion first", true, true, true, true, false, evDone, 1},
		{"lower gpu-let first", true, true, true, true, true, evDone, 0},
		{"control before arrivals", false, true, true, true, false, evControl, -1},
		{"arrivals before timers", false, false, true, true, false, evArrival, -1},
		{"timer", false, false, false, true, false, evTimer, 0},
		{"nothing", false, false, false, false, false, evEnd, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := mk(tc.done, tc.ctl, tc.arr, tc.timer, tc.twoDone)
			kind, when, who := e.next()
			require.Equal(t, tc.kind, kind)
			if kind == evEnd {
				return
			}
			require.Equal(t, at, when)
			if tc.let < 0 {
				require.Nil(t, who)
			} else {
				require.Equal(t, tc.let, who.idx)
			}
		})
	}
	// A timer already due fires now, not in the past.
	e := mk(false, false, false, false, false)
	e.lets[1].wake = 0
	kind, when, who := e.next()
	require.Equal(t, evTimer, kind)
	require.Equal(t, e.now, when)
	require.Equal(t, 1, who.idx)
}

// TestArrivalAtFrontrunJoins: R5 arrives exactly at the frontrun of
// R1..R4 (12.5 − ℓ(5) = 2.5 ms); arrivals go before timers at one instant,
// so R5 joins and the batch of 5 still meets R1's deadline (2.5 + ℓ(5) =
// 12.5).
func TestArrivalAtFrontrunJoins(t *testing.T) {
	w := load(t, "stagger.yaml")
	w.Devices[0].Count = 1
	w.Models[0].Arrival = "trace:frontrun.csv@1"
	w.Duration = workload.Duration(ms(2.6))
	res, rec := run(t, w, exact)
	require.Equal(t, uint64(5), res.Good)
	require.Equal(t, []dispatch{{Let: 0, At: ms(2.5), IDs: []uint64{1, 2, 3, 4, 5}}}, rec.dispatches)
}

func TestReorganization(t *testing.T) {
	w := load(t, "reorganize.yaml")
	res, rec := run(t, w, Options{Window: 5 * time.Second})
	require.GreaterOrEqual(t, res.Reorganizations, 2, "grow at the surge, shrink after")
	first := map[int]time.Duration{}
	for _, d := range rec.dispatches {
		if _, ok := first[d.Let]; !ok {
			first[d.Let] = d.At
		}
	}
	initial := res.Plans[0].Started
	grew := false
	for _, p := range res.Plans[1:] {
		if p.Started == 0 {
			continue
		}
		grew = true
		require.InDelta(t, p.AtS+5, p.ServingS, 1e-9, "new gpu-lets serve after the startup delay")
	}
	require.True(t, grew)
	for let, at := range first {
		if let < initial {
			continue
		}
		served := false
		for _, p := range res.Plans[1:] {
			if p.Started > 0 && at >= time.Duration(p.ServingS*float64(time.Second)) {
				served = true
			}
		}
		require.True(t, served, "gpu-let %d ran a batch at %v before any plan that started one served", let, at)
	}
	at := func(s float64) float64 { return res.SizeSum[int(s/res.IntervalS)] }
	require.Greater(t, at(40), at(10), "more of the GPUs in use at the peak")
	require.Less(t, at(68), at(40), "and less after")
	for _, win := range res.Windows {
		if win.StartS >= 35 { // the surge's gpu-lets serve from 30 s on
			require.Less(t, win.Share, 0.01, "window at %v s", win.StartS)
		}
	}
	require.Greater(t, res.Windows[4].Share, 0.1, "overloaded until the new gpu-lets serve")
}

func TestRunErrors(t *testing.T) {
	ctx := context.Background()
	w := load(t, "stagger.yaml")
	_, err := Run(ctx, w, Options{Policy: "lazy"})
	require.ErrorIs(t, err, sched.ErrBadPolicy)
	_, err = Run(ctx, w, Options{Algo: "best"})
	require.ErrorIs(t, err, workload.ErrInvalid)
	_, err = Run(ctx, w, Options{EWMAWeight: 2})
	require.ErrorIs(t, err, ErrBadOptions)
	_, err = Run(ctx, w, Options{Interval: time.Nanosecond, Duration: time.Hour})
	require.ErrorIs(t, err, ErrBadOptions)

	w.Models[0].Arrival = "trace:absent.csv"
	_, err = Run(ctx, w, Options{})
	require.Error(t, err)
	require.Contains(t, err.Error(), "absent.csv")

	w = load(t, "stagger.yaml")
	w.Models[0].Arrival = "trace:README.md"
	_, err = Run(ctx, w, Options{})
	require.ErrorIs(t, err, arrival.ErrBadTrace)

	w = load(t, "stagger.yaml")
	w.Devices[0].Profiles = "nope"
	_, err = Run(ctx, w, Options{})
	var fe *workload.FieldError
	require.True(t, errors.As(err, &fe))
	require.Equal(t, "devices[0].profiles", fe.Field)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = Run(cctx, load(t, "reorganize.yaml"), Options{})
	require.ErrorIs(t, err, context.Canceled)
}

// TestBatchAtItsLatestMomentIsOnTime: a deferred batch dispatched at its
// latest moment ends exactly at its deadline, which is on time. ResNet152
// on a 4g instance of the measured A100 data has ℓ(1) = ℓ(2) (a segment of
// one process), so every batch of one waits until then; without jitter
// none may be late (1 ns rounding once made 3.6% of them so).
func TestBatchAtItsLatestMomentIsOnTime(t *testing.T) {
	zero := workload.Duration(0)
	w := &workload.Workload{
		Devices:    []workload.Device{{Profiles: "parvagpu-a100", Count: 1, Sizes: []int{57}, MaxGPULets: 1}},
		Duration:   workload.Duration(20 * time.Second),
		Seed:       1,
		Reorganize: &zero,
		Models:     []workload.Model{{Name: "resnet152", SLOMS: 51.33, Rate: 55, Arrival: "poisson"}},
	}
	r, err := Run(context.Background(), w, Options{Algo: "gpulet-int", Policy: "deferred", JitterCV: -1})
	require.NoError(t, err)
	require.Len(t, r.Models, 1)
	m := r.Models[0]
	require.Greater(t, m.Requests, uint64(1000))
	require.Greater(t, m.Batches[1], uint64(10), "batches of one wait until their latest moment")
	require.Zero(t, m.Late)
	require.Equal(t, m.Requests, m.Good)
}
