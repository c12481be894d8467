package sched

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// newSched makes a Scheduler reporting to a recorder, with the given models.
func newSched(t *testing.T, cfg Config, models map[ModelID]ModelConfig) (*Scheduler, *recorder) {
	t.Helper()
	rec := newRecorder()
	s, err := New(cfg, rec)
	require.NoError(t, err)
	for id, mc := range models {
		require.NoError(t, s.AddModel(0, id, mc))
	}
	return s, rec
}

func submit(t *testing.T, s *Scheduler, id uint64, model ModelID, at, deadline time.Duration) {
	t.Helper()
	require.NoError(t, s.Submit(at, Request{ID: id, Model: model, Arrival: at, Deadline: deadline}))
}

// finish completes the running batch at its expected end.
func finish(t *testing.T, s *Scheduler) {
	t.Helper()
	b, ok := s.Running()
	require.True(t, ok)
	require.NoError(t, s.BatchDone(b.End, b.Seq))
}

// TestTwoModelsPriority: one gpu-let, model A with ℓ(b) = b + 5 and model B
// with ℓ(b) = 4b + 1 (ms). A blocker request of A (deadline 6) runs from 0 to
// 6. Meanwhile A gets one request due at 13 and B two due at 15 and 16.
// At 6 both batches are dispatchable:
//
//	A: n=1, frontrun 13 − ℓ_A(2) = 6 ≤ 6; latest = 13 − ℓ_A(1) = 7.
//	B: n=2, frontrun 15 − ℓ_B(3) = 2 ≤ 6; 6 + ℓ_B(2) = 15 ≤ 15 so |B| = 2;
//	   latest = 15 − 9 = 6.
//
// deferred takes the smallest latest: B's pair at 6 (ends 15), and A's
// request expires at 13 − 6 + 1 ns. eager would take the earliest head
// deadline, A at 6 (ends 12), and B's requests would expire; but B's head
// was waiting while A's blocker ran and could not finish after A's second
// batch (12 + ℓ_B(1) = 17 > 15), so A owes B a turn (turns.go): B's pair
// goes at 6, as under deferred. flex takes the largest batch: B's pair.
func TestTwoModelsPriority(t *testing.T) {
	models := func(t *testing.T) map[ModelID]ModelConfig {
		return map[ModelID]ModelConfig{
			0: {Latency: linear(t, 1, 5, 8)},
			1: {Latency: linear(t, 4, 1, 8)},
		}
	}
	tests := []struct {
		policy  Policy
		batches []dispatched
		rejects []rejected
	}{
		{Deferred{}, []dispatched{
			{At: 0, Model: 0, IDs: []uint64{1}},
			{At: ms(6), Model: 1, IDs: []uint64{3, 4}},
		}, []rejected{{At: ms(7) + 1, ID: 2, Why: DeadlineUnreachable}}},
		{Eager{}, []dispatched{
			{At: 0, Model: 0, IDs: []uint64{1}},
			{At: ms(6), Model: 1, IDs: []uint64{3, 4}},
		}, []rejected{{At: ms(7) + 1, ID: 2, Why: DeadlineUnreachable}}},
		{Flex{}, []dispatched{
			{At: 0, Model: 0, IDs: []uint64{1}},
			{At: ms(6), Model: 1, IDs: []uint64{3, 4}},
		}, []rejected{{At: ms(7) + 1, ID: 2, Why: DeadlineUnreachable}}},
	}
	for _, tc := range tests {
		t.Run(tc.policy.String(), func(t *testing.T) {
			s, rec := newSched(t, Config{Policy: tc.policy}, models(t))
			submit(t, s, 1, 0, 0, ms(6))
			submit(t, s, 2, 0, ms(1), ms(13))
			submit(t, s, 3, 1, ms(1), ms(15))
			submit(t, s, 4, 1, ms(2), ms(16))
			for {
				if b, ok := s.Running(); ok {
					if w, ok := s.NextWakeup(); ok && w < b.End {
						s.Advance(w)
						continue
					}
					finish(t, s)
					continue
				}
				w, ok := s.NextWakeup()
				if !ok {
					break
				}
				s.Advance(w)
			}
			require.Equal(t, tc.batches, rec.dispatches)
			require.Equal(t, tc.rejects, rec.rejects)
		})
	}
}

// TestDeferredEqualFrontrunPicksSmallestLatest: two models with the same
// ℓ(b) = b + 5, both dispatchable when the gpu-let frees at 6; the one with
// the smaller latest goes first even though its id is larger and its head
// arrived later.
func TestDeferredEqualFrontrunPicksSmallestLatest(t *testing.T) {
	l := linear(t, 1, 5, 8)
	s, rec := newSched(t, Config{}, map[ModelID]ModelConfig{0: {Latency: l}, 1: {Latency: l}})
	submit(t, s, 1, 0, 0, ms(6))      // runs 0..6
	submit(t, s, 2, 0, ms(1), ms(13)) // latest 13 − 6 = 7
	submit(t, s, 3, 1, ms(2), ms(12)) // latest 12 − 6 = 6
	finish(t, s)
	require.Equal(t, []dispatched{
		{At: 0, Model: 0, IDs: []uint64{1}},
		{At: ms(6), Model: 1, IDs: []uint64{3}},
	}, rec.dispatches)
}

func TestQueueFull(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		mc       ModelConfig
		accepted int
	}{
		{"scheduler bound", Config{MaxQueue: 2}, ModelConfig{}, 2},
		{"model bound wins", Config{MaxQueue: 2}, ModelConfig{MaxQueue: 3}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.mc.Latency = linear(t, 1, 5, 8)
			s, rec := newSched(t, tc.cfg, map[ModelID]ModelConfig{0: tc.mc})
			for i := range 5 {
				submit(t, s, uint64(i+1), 0, ms(float64(i)), ms(100))
			}
			require.Equal(t, tc.accepted, s.Queued(0))
			var want []rejected
			for i := tc.accepted; i < 5; i++ {
				want = append(want, rejected{At: ms(float64(i)), ID: uint64(i + 1), Why: QueueFull})
			}
			require.Equal(t, want, rec.rejects)
			require.Empty(t, rec.dispatches)
		})
	}
}

// TestRemoveModelRejectsQueued: requests of two models wait (deferred:solo,
// which lets both wait for their frontruns); removing one model rejects its
// requests and leaves the other's timed by its frontrun.
func TestRemoveModelRejectsQueued(t *testing.T) {
	l := linear(t, 1, 5, 8)
	s, rec := newSched(t, Config{Policy: Deferred{Solo: true, Always: true}}, map[ModelID]ModelConfig{0: {Latency: l}, 1: {Latency: l}})
	submit(t, s, 1, 0, 0, ms(100))
	submit(t, s, 2, 0, ms(1), ms(100))
	submit(t, s, 3, 1, ms(1), ms(100))
	require.NoError(t, s.RemoveModel(ms(2), 0))
	require.Equal(t, []rejected{
		{At: ms(2), ID: 1, Why: ModelRemoved},
		{At: ms(2), ID: 2, Why: ModelRemoved},
	}, rec.rejects)
	require.Equal(t, []ModelID{1}, s.Models(nil))
	require.ErrorIs(t, s.Submit(ms(3), Request{ID: 4, Model: 0, Deadline: ms(100)}), ErrUnknownModel)
	require.ErrorIs(t, s.RemoveModel(ms(3), 0), ErrUnknownModel)
	// Model 1 is untouched: its request is still timed by its frontrun.
	w, ok := s.NextWakeup()
	require.True(t, ok)
	require.Equal(t, ms(100)-l.At(2), w)
	require.Equal(t, 1, s.Queued(1))
}

func TestRemoveModelWhileItsBatchRuns(t *testing.T) {
	l := linear(t, 1, 5, 8)
	s, rec := newSched(t, Config{Policy: Eager{}}, map[ModelID]ModelConfig{0: {Latency: l}})
	submit(t, s, 1, 0, 0, ms(100))
	require.Len(t, rec.dispatches, 1)
	require.NoError(t, s.RemoveModel(ms(1), 0))
	finish(t, s) // the running batch still completes
	require.Empty(t, rec.rejects)
}

func TestAddModelErrors(t *testing.T) {
	l := linear(t, 1, 5, 8)
	s, _ := newSched(t, Config{}, map[ModelID]ModelConfig{3: {Latency: l}})
	require.ErrorIs(t, s.AddModel(0, 3, ModelConfig{Latency: l}), ErrModelExists)
	require.ErrorIs(t, s.AddModel(0, MaxModels, ModelConfig{Latency: l}), ErrBadModelID)
	require.ErrorIs(t, s.AddModel(0, 4, ModelConfig{}), ErrBadLatency)
	require.ErrorIs(t, s.AddModel(0, 4, ModelConfig{Latency: l, MaxQueue: -1}), ErrBadConfig)
	_, err := New(Config{}, nil)
	require.ErrorIs(t, err, ErrBadConfig)
	_, err = New(Config{Policy: Flex{Lambda: 0.5}}, newRecorder())
	require.ErrorIs(t, err, ErrBadPolicy)
	_, err = New(Config{Policy: Timeout{K: -1}}, newRecorder())
	require.ErrorIs(t, err, ErrBadPolicy)
}

// TestSubmitUnreachable: a request that cannot finish even alone is rejected
// at once, and one exactly on the edge (now + ℓ(1) = deadline) is served.
func TestSubmitUnreachable(t *testing.T) {
	s, rec := newSched(t, Config{}, map[ModelID]ModelConfig{0: {Latency: linear(t, 1, 5, 8)}})
	submit(t, s, 1, 0, ms(1), ms(6.5))
	submit(t, s, 2, 0, ms(1), ms(7))
	require.Equal(t, []rejected{{At: ms(1), ID: 1, Why: DeadlineUnreachable}}, rec.rejects)
	require.Equal(t, []dispatched{{At: ms(1), IDs: []uint64{2}}}, rec.dispatches)
}

// TestExpiryWhileBusy: queued requests whose deadline becomes unreachable
// while the gpu-let is busy are rejected at that very instant, and the
// NextWakeup the driver sees is that instant.
func TestExpiryWhileBusy(t *testing.T) {
	s, rec := newSched(t, Config{}, map[ModelID]ModelConfig{0: {Latency: linear(t, 1, 5, 8)}})
	submit(t, s, 1, 0, 0, ms(6)) // runs 0..6
	submit(t, s, 2, 0, ms(1), ms(9))
	submit(t, s, 3, 0, ms(1), ms(10))
	w, ok := s.NextWakeup()
	require.True(t, ok)
	require.Equal(t, ms(3)+1, w)
	s.Advance(ms(3)) // not yet: 3 + 6 = 9 is still on time
	require.Empty(t, rec.rejects)
	s.Advance(w)
	require.Equal(t, []rejected{{At: ms(3) + 1, ID: 2, Why: DeadlineUnreachable}}, rec.rejects)
	w, _ = s.NextWakeup()
	require.Equal(t, ms(4)+1, w)
	finish(t, s) // at 6 request 3 has expired already
	require.Equal(t, rejected{At: ms(6), ID: 3, Why: DeadlineUnreachable}, rec.rejects[1])
}

// TestTighterDeadlineJumpsTheQueue: a request with a tighter deadline goes
// to the head and sets the batch's deadline.
func TestTighterDeadlineJumpsTheQueue(t *testing.T) {
	s, rec := newSched(t, Config{}, map[ModelID]ModelConfig{0: {Latency: linear(t, 1, 5, 2)}})
	submit(t, s, 1, 0, 0, ms(6)) // runs 0..6
	submit(t, s, 2, 0, ms(1), ms(40))
	submit(t, s, 3, 0, ms(1), ms(30))
	submit(t, s, 4, 0, ms(2), ms(14))
	finish(t, s)
	// Queue by deadline: 4 (14), 3 (30), 2 (40); max batch 2 → {4, 3} at 6.
	require.Equal(t, []uint64{4, 3}, rec.dispatches[1].IDs)
	require.Equal(t, ms(6), rec.dispatches[1].At)
}

func TestClockNeverGoesBack(t *testing.T) {
	s, rec := newSched(t, Config{Policy: Eager{}}, map[ModelID]ModelConfig{0: {Latency: linear(t, 1, 5, 8)}})
	submit(t, s, 1, 0, ms(5), ms(100))
	require.NoError(t, s.Submit(ms(1), Request{ID: 2, Deadline: ms(100)}))
	finish(t, s)
	require.Equal(t, ms(11), rec.dispatches[1].At) // not 1
}
