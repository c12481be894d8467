package sched

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFlexPicksLargerBatch: a blocker runs 0..6; meanwhile model A queues two
// requests due at 30 and 31, model B three due at 40..42 (ℓ(b) = b + 5 ms for
// both). When the gpu-let frees at 6, flex takes B's three (largest feasible
// batch), eager takes A's two (earliest head deadline). Deferred as Symphony
// published it (solo) takes neither: A's frontrun is 30 − ℓ(3) = 22 and B's
// 40 − ℓ(4) = 31. The default deferred policy does not idle while two models
// wait (guard.go): it takes the smaller latest moment, A's 30 − ℓ(2) = 23
// against B's 40 − ℓ(3) = 32.
func TestFlexPicksLargerBatch(t *testing.T) {
	tests := []struct {
		policy Policy
		want   []dispatched
	}{
		{Flex{}, []dispatched{{At: ms(6), Model: 1, IDs: []uint64{4, 5, 6}}}},
		{Flex{Preempt: true}, []dispatched{{At: ms(6), Model: 1, IDs: []uint64{4, 5, 6}}}},
		{Eager{}, []dispatched{{At: ms(6), Model: 0, IDs: []uint64{2, 3}}}},
		{Deferred{Solo: true}, []dispatched{}},
		{Deferred{}, []dispatched{{At: ms(6), Model: 0, IDs: []uint64{2, 3}}}},
	}
	for _, tc := range tests {
		t.Run(tc.policy.String(), func(t *testing.T) {
			l := linear(t, 1, 5, 16)
			s, rec := newSched(t, Config{Policy: tc.policy}, map[ModelID]ModelConfig{0: {Latency: l}, 1: {Latency: l}})
			submit(t, s, 1, 0, 0, ms(6))
			submit(t, s, 2, 0, ms(1), ms(30))
			submit(t, s, 3, 0, ms(1), ms(31))
			submit(t, s, 4, 1, ms(1), ms(40))
			submit(t, s, 5, 1, ms(1), ms(41))
			submit(t, s, 6, 1, ms(1), ms(42))
			finish(t, s)
			require.Equal(t, tc.want, rec.dispatches[1:])
			require.Empty(t, rec.preempts)
		})
	}
}

// TestFlexPreemption: model A's single request runs from 0 (ℓ(1) = 6 ms);
// model B's requests arrive at 1, 2, 3, 4, 5 ms, all due at 100. With λ the
// running batch (size 1) is preempted by the first arrival that makes B's
// feasible batch ≥ λ·1: the 4th for λ = 3.03, the 3rd for λ = 3, never
// without preemption. The preempted request goes back to A's queue when it
// can still finish alone (deadline 100), or is rejected with Preempted when
// it cannot (deadline 6.5: at 3 or 4 ms, + 6 > 6.5).
func TestFlexPreemption(t *testing.T) {
	tests := []struct {
		name       string
		policy     string
		aDeadline  float64
		preemptAt  float64 // 0: none
		batchB     []uint64
		aRejected  bool
		aRequeued  bool
		firstAfter float64 // when the second batch starts
	}{
		{"default lambda fires at 4", "flex", 100, 4, []uint64{2, 3, 4, 5}, false, true, 4},
		{"lambda 3 fires at 3", "flex:lambda=3", 100, 3, []uint64{2, 3, 4}, false, true, 3},
		{"preempted request rejected", "flex", 6.5, 4, []uint64{2, 3, 4, 5}, true, false, 4},
		{"no preemption", "flex:nopreempt", 100, 0, []uint64{2, 3, 4, 5, 6}, false, false, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePolicy(tc.policy)
			require.NoError(t, err)
			l := linear(t, 1, 5, 16)
			s, rec := newSched(t, Config{Policy: p}, map[ModelID]ModelConfig{0: {Latency: l}, 1: {Latency: l}})
			submit(t, s, 1, 0, 0, ms(tc.aDeadline))
			first, _ := s.Running()
			for i := range 5 {
				at := ms(float64(i + 1))
				if tc.preemptAt > 0 && at > ms(tc.preemptAt) {
					break
				}
				submit(t, s, uint64(i+2), 1, at, ms(100))
			}
			if tc.preemptAt == 0 {
				require.Empty(t, rec.preempts)
				finish(t, s)
			} else {
				require.Equal(t, []preempted{{At: ms(tc.preemptAt), IDs: []uint64{1}}}, rec.preempts)
				require.ErrorIs(t, s.BatchDone(first.End, first.Seq), ErrNoBatch, "a preempted batch cannot complete")
				require.Equal(t, uint64(1), s.Stats().Preemptions)
			}
			require.Equal(t, dispatched{At: ms(tc.firstAfter), Model: 1, IDs: tc.batchB}, rec.dispatches[1])
			if tc.aRejected {
				require.Equal(t, []rejected{{At: ms(tc.preemptAt), ID: 1, Why: Preempted}}, rec.rejects)
			} else {
				require.Empty(t, rec.rejects)
			}
			require.Equal(t, tc.aRequeued, s.Queued(0) == 1)
		})
	}
}

// TestFlexPreemptionCountsFeasibleBatch: arrivals that the deadline keeps
// out of the feasible batch do not count towards λ.
func TestFlexPreemptionCountsFeasibleBatch(t *testing.T) {
	l := linear(t, 1, 5, 16)
	s, rec := newSched(t, Config{Policy: Flex{Preempt: true}}, map[ModelID]ModelConfig{0: {Latency: l}, 1: {Latency: l}})
	submit(t, s, 1, 0, 0, ms(100))
	// B's head is due at 1 + 8 = 9: from 1 ms only ℓ(b) ≤ 8, b ≤ 3, fits.
	submit(t, s, 2, 1, ms(1), ms(9))
	for i := range 4 {
		submit(t, s, uint64(i+3), 1, ms(1), ms(100))
	}
	require.Equal(t, 5, s.Queued(1))
	require.Empty(t, rec.preempts)
}

// TestSimPreemption runs the preemption case through the simulator: A's
// request runs from 0 and is preempted at 4 by B's fourth request; B's batch
// of 4 runs 4..13, then A's request again 13..19. The gpu-let was busy 4 ms
// for the wasted run plus 9 + 6 ms.
func TestSimPreemption(t *testing.T) {
	l := linear(t, 1, 5, 16)
	specs := []ExecutorSpec{{Config: Config{Policy: Flex{Preempt: true}}, Models: []ModelSpec{
		{ID: 0, ModelConfig: ModelConfig{Latency: l}}, {ID: 1, ModelConfig: ModelConfig{Latency: l}},
	}}}
	reqs := []Request{{ID: 1, Model: 0, Arrival: 0, Deadline: ms(100)}}
	for i := range 4 {
		at := ms(float64(i + 1))
		reqs = append(reqs, Request{ID: uint64(i + 2), Model: 1, Arrival: at, Deadline: ms(100)})
	}
	rec := newRecorder()
	sim, err := NewSim(specs, rec)
	require.NoError(t, err)
	st, err := sim.Run(NewSliceSource(reqs))
	require.NoError(t, err)
	require.Equal(t, []preempted{{At: ms(4), IDs: []uint64{1}}}, rec.preempts)
	require.Equal(t, []dispatched{
		{At: ms(4), Model: 1, IDs: []uint64{2, 3, 4, 5}},
		{At: ms(13), Model: 0, IDs: []uint64{1}},
	}, rec.completes)
	require.Equal(t, uint64(1), st.Preemptions)
	require.Equal(t, uint64(5), st.Completed)
	require.Equal(t, ms(19), st.End)
	require.Equal(t, ms(19), sim.BusyTime(0))
}
