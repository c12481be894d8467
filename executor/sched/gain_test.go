package sched

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDeferGains(t *testing.T) {
	// ℓ(b) = b + 5 ms: per-request cost 6, 3.5, 2.67, … falls fast at first,
	// then by less than 2% per request: from n = 13 on (19/14 vs 18/13 is
	// 1.98%) waiting gains too little.
	g := deferGains(linear(t, 1, 5, 32))
	require.Len(t, g, 33)
	require.True(t, g[0])
	for n := 1; n <= 12; n++ {
		require.True(t, g[n], "n=%d", n)
	}
	require.False(t, g[13])
	require.False(t, g[32], "a full batch never waits")
	// BERT-like ℓ(b) = 7.35·b + 0.22 ms: one more request saves under 2%.
	bert := deferGains(linear(t, 7.35, 0.22, 8))
	for n := 1; n <= 8; n++ {
		require.False(t, bert[n], "n=%d", n)
	}
}

// TestDeferralWaitsOnlyWhereItGains: two requests of a model whose cost per
// request barely falls run at once; Algorithm 1 as written
// (deferred:always) holds them to their frontrun d − ℓ(3).
func TestDeferralWaitsOnlyWhereItGains(t *testing.T) {
	for _, tc := range []struct {
		policy string
		at     float64
	}{
		{"deferred", 0},
		{"deferred:always", 100 - (7.35*3 + 0.22)},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			p, err := ParsePolicy(tc.policy)
			require.NoError(t, err)
			require.Equal(t, tc.policy, p.String())
			rec := newRecorder()
			s, err := New(Config{Policy: p}, rec)
			require.NoError(t, err)
			require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: linear(t, 7.35, 0.22, 8)}))
			require.NoError(t, s.SubmitAll(0, []Request{{ID: 1, Deadline: ms(100)}, {ID: 2, Deadline: ms(100)}}))
			if w, ok := s.NextWakeup(); ok && w < ms(100) {
				s.Advance(w)
			}
			require.Len(t, rec.dispatches, 1)
			require.InDelta(t, float64(ms(tc.at)), float64(rec.dispatches[0].At), float64(ms(0.001)))
		})
	}
}

func TestIdleWaits(t *testing.T) {
	// ℓ(b) = b + 5 ms: one more request saves (n+1)·ℓ(n)/n − ℓ(n+1) = 5/n
	// ms of gpu time; a batch of n waits IdleWaitFactor times that.
	w := idleWaits(linear(t, 1, 5, 8))
	require.Len(t, w, 9)
	require.Zero(t, w[0])
	for n := 1; n < 8; n++ {
		require.InDelta(t, float64(ms(IdleWaitFactor*5/float64(n))), float64(w[n]), 1, "n=%d", n)
	}
	require.Zero(t, w[8], "a full batch cannot grow")
	// ℓ that grows faster than linearly from 2 to 3: batching saves nothing.
	l, err := NewLatency([]LatencyPoint{{1, 4}, {2, 5}, {3, 9}}, 1, nil, 0)
	require.NoError(t, err)
	w = idleWaits(l)
	require.InDelta(t, float64(ms(IdleWaitFactor*3)), float64(w[1]), 1)
	require.Zero(t, w[2])
}

// TestIdleRuleEndsTheWait: ℓ(b) = b + 5 ms, SLO 100 ms, one model alone.
// Algorithm 1 as written (deferred:always) holds a batch to its frontrun,
// d − ℓ(n+1); the default waits on a free gpu-let at most IdleWaitFactor
// times the gpu time the next request would save (5/n ms), counted from the
// later of the last arrival and the end of the gpu-let's last batch.
func TestIdleRuleEndsTheWait(t *testing.T) {
	l := linear(t, 1, 5, 8)
	tests := []struct {
		name   string
		policy Policy
		reqs   []Request
		want   []dispatched
	}{{
		// One request: 0 + 2·5 = 10 instead of 100 − ℓ(2) = 93.
		name: "lone request", policy: Deferred{},
		reqs: periodic(0, 1, 0, 0, ms(100)),
		want: []dispatched{{At: ms(10), IDs: []uint64{1}}},
	}, {
		name: "lone request, always", policy: Deferred{Always: true},
		reqs: periodic(0, 1, 0, 0, ms(100)),
		want: []dispatched{{At: ms(93), IDs: []uint64{1}}},
	}, {
		// Arrivals 4 ms apart come within the bound (10, then 4 + 5,
		// then 8 + 10/3): the batch grows to 3 and leaves at 8 + 3.33;
		// request 4 (at 12) then waits for the gpu-let, free at 19.33, and
		// 10 ms more.
		name: "steady arrivals keep it waiting", policy: Deferred{},
		reqs: []Request{{ID: 1, Arrival: 0, Deadline: ms(100)}, {ID: 2, Arrival: ms(4), Deadline: ms(104)}, {ID: 3, Arrival: ms(8), Deadline: ms(108)}, {ID: 4, Arrival: ms(12), Deadline: ms(112)}},
		want: []dispatched{{At: ms(8) + ms(10)/3, IDs: []uint64{1, 2, 3}}, {At: ms(8) + ms(10)/3 + ms(18), IDs: []uint64{4}}},
	}, {
		// A full batch runs 0..13; request 9 arrives at 1 while it runs
		// and waits until 13 + 10, not 1 + 10.
		name: "counted from the gpu-let's free moment", policy: Deferred{},
		reqs: append(periodic(0, 8, 0, 0, ms(100)), Request{ID: 9, Arrival: ms(1), Deadline: ms(101)}),
		want: []dispatched{{At: 0, IDs: []uint64{1, 2, 3, 4, 5, 6, 7, 8}}, {At: ms(23), IDs: []uint64{9}}},
	}, {
		// The full batch keeps the gpu-let counted busy; two seconds free
		// leave e^−2 of it, so request 9 waits that share of the bound over
		// IdleBusyFull: 2.7 ms of the 10.
		name: "a gpu-let free for a while waits less", policy: Deferred{},
		reqs: append(periodic(0, 8, 0, 0, ms(100)), Request{ID: 9, Arrival: ms(2013), Deadline: ms(2113)}),
		want: []dispatched{{At: 0, IDs: []uint64{1, 2, 3, 4, 5, 6, 7, 8}},
			{At: ms(2013) + time.Duration(float64(ms(10))*math.Exp(-2)/IdleBusyFull), IDs: []uint64{9}}},
	}, {
		// After a minute free nothing is worth waiting for: at once, as
		// eager.
		name: "a lone request on an idle gpu-let", policy: Deferred{},
		reqs: append(periodic(0, 8, 0, 0, ms(100)), Request{ID: 9, Arrival: 60 * time.Second, Deadline: 60*time.Second + ms(100)}),
		want: []dispatched{{At: 0, IDs: []uint64{1, 2, 3, 4, 5, 6, 7, 8}}, {At: 60 * time.Second, IDs: []uint64{9}}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, st := simulate(t, one(tc.policy, 0, l), tc.reqs)
			require.Equal(t, tc.want, rec.dispatches)
			require.Empty(t, rec.rejects)
			require.Zero(t, st.Late)
		})
	}
}
