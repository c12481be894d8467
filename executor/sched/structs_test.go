package sched

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestQueueMatchesSortedSlice drives the ring with random inserts, pops and
// takes (wrapping around and growing) against a stably sorted slice.
func TestQueueMatchesSortedSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q queue
	var ref []Request
	var id uint64
	for step := range 20000 {
		switch op := rng.IntN(10); {
		case op < 6:
			id++
			r := Request{ID: id, Deadline: time.Duration(rng.IntN(50))}
			q.insert(r)
			i := len(ref)
			for i > 0 && ref[i-1].Deadline > r.Deadline {
				i--
			}
			ref = slices.Insert(ref, i, r)
		case op < 8 && len(ref) > 0:
			require.Equal(t, ref[0], q.popFront())
			ref = ref[1:]
		case len(ref) > 0:
			k := 1 + rng.IntN(len(ref))
			got := q.take(nil, k)
			require.Equal(t, ref[:k], got)
			ref = ref[k:]
		}
		require.Equal(t, len(ref), q.n, "step %d", step)
		for i := range ref {
			require.Equal(t, ref[i], *q.at(i))
		}
	}
}

// TestHeapMatchesLinearScan drives the indexed heap with random key changes
// against a plain array, including due().
func TestHeapMatchesLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 40
	var h mheap
	h.ensure(n)
	ref := make([]time.Duration, n)
	for i := range ref {
		ref[i] = never
	}
	for step := range 20000 {
		id := ModelID(rng.IntN(n))
		k := time.Duration(rng.IntN(100))
		if rng.IntN(4) == 0 {
			k = never
		}
		h.set(id, k)
		ref[id] = k
		want := slices.Min(ref)
		require.Equal(t, want, h.min(), "step %d", step)
		if want != never {
			require.Equal(t, want, ref[h.top()])
		}
		tq := time.Duration(rng.IntN(100))
		got, _ := h.due(tq, nil, nil)
		var wantDue []int32
		for i, v := range ref {
			if v <= tq {
				wantDue = append(wantDue, int32(i))
			}
		}
		slices.Sort(got)
		require.Equal(t, wantDue, got)
	}
}

func TestVirtualClock(t *testing.T) {
	var c VirtualClock
	require.Zero(t, c.Now())
	require.NoError(t, c.AdvanceTo(ms(5)))
	c.Advance(ms(1))
	c.Advance(-ms(3))
	require.Equal(t, ms(6), c.Now())
	require.ErrorIs(t, c.AdvanceTo(ms(2)), ErrTimeOrder)
	require.Equal(t, ms(6), c.Now())
	var _ Clock = &c
}

func TestRealClockIsMonotonic(t *testing.T) {
	c := NewRealClock()
	a := c.Now()
	b := c.Now()
	require.GreaterOrEqual(t, a, time.Duration(0))
	require.GreaterOrEqual(t, b, a)
}

func TestReasonNames(t *testing.T) {
	seen := map[string]bool{}
	for r := DeadlineUnreachable; r < numReasons; r++ {
		require.NotEqual(t, "unknown", r.String())
		require.False(t, seen[r.String()])
		seen[r.String()] = true
	}
	require.Equal(t, "unknown", Reason(0).String())
}

// TestPoissonSource checks the rates and the model mix of the source.
func TestPoissonSource(t *testing.T) {
	streams := []Stream{{Model: 3, Rate: 100, SLO: ms(10)}, {Model: 5, Rate: 300, SLO: ms(20)}, {Model: 9, Rate: 600, SLO: ms(30)}}
	src, err := NewPoissonSource(streams, 200000, 42)
	require.NoError(t, err)
	count := map[ModelID]int{}
	var last Request
	for {
		r, ok := src.Next()
		if !ok {
			break
		}
		if r.Arrival < last.Arrival || r.ID != last.ID+1 || r.Deadline <= r.Arrival {
			t.Fatalf("request %+v after %+v", r, last)
		}
		count[r.Model]++
		last = r
	}
	require.Equal(t, uint64(200000), last.ID)
	// 200000 arrivals at 1000/s take about 200 s; the shares follow the rates.
	require.InDelta(t, 200.0, last.Arrival.Seconds(), 2)
	require.InDelta(t, 0.1, float64(count[3])/200000, 0.005)
	require.InDelta(t, 0.3, float64(count[5])/200000, 0.005)
	require.InDelta(t, 0.6, float64(count[9])/200000, 0.005)
	_, err = NewPoissonSource(nil, 1, 1)
	require.ErrorIs(t, err, ErrBadConfig)
	_, err = NewPoissonSource([]Stream{{Rate: 0, SLO: 1}}, 1, 1)
	require.ErrorIs(t, err, ErrBadConfig)
}
