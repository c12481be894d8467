package sched

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSymphonyExample runs the example of Symphony §3.3 on ONE gpu-let:
// ℓ(b) = b + 5 ms, SLO 12 ms, request Ri arriving at 0.75·(i−1) ms, R1..R16.
// Under deadline pressure a single gpu-let is overloaded (4 requests per
// 9 ms at best against 4 per 3 ms offered), so the point is the exact timing
// of each decision. Rejections happen at the first nanosecond at which
// now + ℓ(1) > deadline, i.e. deadline − 6 ms + 1 ns.
//
// deferred, worked by hand:
//
//	R1 (t=0, d=12): n=1, ready at 12 − ℓ(2) = 5.
//	R2 (0.75): n=2, ready at 12 − ℓ(3) = 4.   R3 (1.5): n=3, ready 12 − ℓ(4) = 3;
//	  at t=2.0 the candidate R1..R3 has exec 3.0 and waits.
//	R4 (2.25): n=4, frontrun 12 − ℓ(5) = 2 ≤ 2.25 → dispatch R1..R4 at 2.25,
//	  ends 2.25 + 9 = 11.25.
//	R5 (3.0, d=15)   is hopeless after 15 − 6 = 9     → rejected at 9 ms + 1 ns;
//	R6 (d=15.75) at 9.75 + 1 ns; R7 (d=16.5) at 10.5 + 1 ns.
//	11.25: the batch ends (completions go before the arrival of R16 at the
//	  same instant). Head R8 (d=17.25): 11.25 + ℓ(2) = 18.25 > 17.25, so
//	  GETBATCH gives 1 and the frontrun has passed → R8 alone at 11.25,
//	  ends 17.25.
//	R9..R15 (d = 18 … 22.5) expire at d − 6 + 1 ns: 12, 12.75, 13.5, 14.25,
//	  15, 15.75, 16.5.
//	17.25: R16 (d=23.25) alone: 17.25 + 6 = 23.25 ≤ 23.25 → at 17.25.
//
// eager: R1 alone at 0 (ends 6); at 6 head R2 (d=12.75) allows only 1 →
// R2 at 6 (ends 12); R3..R8 expire at d − 6 + 1 ns (7.5 … 11.25); R9 (d=18)
// alone at 12 (ends 18); R10..R16 expire (12.75 … 17.25).
//
// timeout:1ms: R1 at 0 is ready at 0 + 1 = 1 (before its frontrun 5); R2
// joins at 0.75 → R1,R2 at 1.0 (ends 8); R3 expires at 7.5 + 1 ns; at 8 head
// R4 (d=14.25) allows 1 → R4 at 8 (ends 14); R5..R11 expire (9 … 13.5); at 14
// R12 (d=20.25) alone (ends 20); R13..R16 expire (15 … 17.25).
//
// The deferred trace above is Symphony's, with GETBATCH from the head
// (deferred:headonly). The default deferred policy also drops heads under
// overload (window.go) and differs from 11.25 on: the queue is R8..R15
// (d = 17.25 … 22.5); from the head R8 goes alone and R9 (d=18) can no longer
// finish after it (17.25 + 6 > 18), so serving from the head loses queued
// requests and the best window is taken: R12..R15, 11.25 + ℓ(4) = 20.25 = d12,
// 4 requests per 9 ms against 1 per 6 from the head. R8..R11 could not finish
// after it (20.25 + 6 is past their deadlines) and are dropped at 11.25.
// R16 (d=23.25) arrives at 11.25, waits for the gpu-let until 20.25 and
// expires at 17.25 + 1 ns. 8 requests served instead of 6.
func TestSymphonyExample(t *testing.T) {
	at := func(x float64) time.Duration { return ms(x) + 1 } // first infeasible ns
	expired := func(pairs ...float64) []rejected {
		var out []rejected
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, rejected{At: at(pairs[i+1]), ID: uint64(pairs[i]), Why: DeadlineUnreachable})
		}
		return out
	}
	tests := []struct {
		policy  Policy
		batches []dispatched
		rejects []rejected
	}{
		{
			policy: Deferred{HeadOnly: true},
			batches: []dispatched{
				{At: ms(2.25), IDs: []uint64{1, 2, 3, 4}},
				{At: ms(11.25), IDs: []uint64{8}},
				{At: ms(17.25), IDs: []uint64{16}},
			},
			rejects: expired(5, 9, 6, 9.75, 7, 10.5,
				9, 12, 10, 12.75, 11, 13.5, 12, 14.25, 13, 15, 14, 15.75, 15, 16.5),
		},
		{
			policy: Deferred{},
			batches: []dispatched{
				{At: ms(2.25), IDs: []uint64{1, 2, 3, 4}},
				{At: ms(11.25), IDs: []uint64{12, 13, 14, 15}},
			},
			rejects: append(append(expired(5, 9, 6, 9.75, 7, 10.5),
				rejected{At: ms(11.25), ID: 8, Why: Dropped}, rejected{At: ms(11.25), ID: 9, Why: Dropped},
				rejected{At: ms(11.25), ID: 10, Why: Dropped}, rejected{At: ms(11.25), ID: 11, Why: Dropped}),
				expired(16, 17.25)...),
		},
		{
			policy: Eager{},
			batches: []dispatched{
				{At: 0, IDs: []uint64{1}},
				{At: ms(6), IDs: []uint64{2}},
				{At: ms(12), IDs: []uint64{9}},
			},
			rejects: expired(3, 7.5, 4, 8.25, 5, 9, 6, 9.75, 7, 10.5, 8, 11.25,
				10, 12.75, 11, 13.5, 12, 14.25, 13, 15, 14, 15.75, 15, 16.5, 16, 17.25),
		},
		{
			policy: Timeout{K: ms(1)},
			batches: []dispatched{
				{At: ms(1), IDs: []uint64{1, 2}},
				{At: ms(8), IDs: []uint64{4}},
				{At: ms(14), IDs: []uint64{12}},
			},
			rejects: expired(3, 7.5, 5, 9, 6, 9.75, 7, 10.5, 8, 11.25, 9, 12, 10, 12.75, 11, 13.5,
				13, 15, 14, 15.75, 15, 16.5, 16, 17.25),
		},
	}
	for _, tc := range tests {
		t.Run(tc.policy.String(), func(t *testing.T) {
			reqs := periodic(0, 16, 0, ms(0.75), ms(12))
			rec, st := simulate(t, one(tc.policy, 0, linear(t, 1, 5, 16)), reqs)
			require.Equal(t, tc.batches, rec.dispatches)
			require.Equal(t, tc.batches, rec.completes)
			require.Equal(t, tc.rejects, rec.rejects)
			require.Zero(t, st.Late)
			require.Len(t, rec.answers, 16)
			for id, n := range rec.answers {
				require.Equal(t, 1, n, "request %d answered %d times", id, n)
			}
		})
	}
}

// TestDeferredWaitsForFrontrun checks the candidate at t = 2.0 in the example
// directly on a Scheduler: R1..R3 queued, nothing dispatched, the next timer
// is the frontrun 12 − ℓ(4) = 3.0; R4 at 2.25 dispatches R1..R4 at once.
func TestDeferredWaitsForFrontrun(t *testing.T) {
	rec := newRecorder()
	s, err := New(Config{}, rec)
	require.NoError(t, err)
	require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: linear(t, 1, 5, 16)}))
	reqs := periodic(0, 4, 0, ms(0.75), ms(12))
	for _, r := range reqs[:3] {
		require.NoError(t, s.Submit(r.Arrival, r))
	}
	s.Advance(ms(2))
	require.Empty(t, rec.dispatches)
	w, ok := s.NextWakeup()
	require.True(t, ok)
	require.Equal(t, ms(3), w)
	st, err := s.RouteState(ms(2), 0)
	require.NoError(t, err)
	require.Equal(t, RouteState{FreeAt: ms(2), Queued: 3, Size: 3, Deadline: ms(12), Exec: ms(3), Latest: ms(4), Latency: st.Latency,
		DispatchAt: 13, IdleRule: true}, st, "ℓ(b) = b + 5 gains 2% per request up to 12")

	require.NoError(t, s.Submit(reqs[3].Arrival, reqs[3]))
	require.Equal(t, []dispatched{{At: ms(2.25), IDs: []uint64{1, 2, 3, 4}}}, rec.dispatches)
	b, busy := s.Running()
	require.True(t, busy)
	require.Equal(t, ms(11.25), b.End)
	// Busy: only expiries wake the driver, and nothing waits.
	_, ok = s.NextWakeup()
	require.False(t, ok)
	require.NoError(t, s.BatchDone(ms(11.25), b.Seq))
	require.ErrorIs(t, s.BatchDone(ms(11.25), b.Seq), ErrNoBatch)
}
