package sched

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// SetPolicy switches a scheduler with queued work: the queue stays, and from
// the switch on it is served as a scheduler that had the new policy from the
// start would serve it.
func TestSetPolicySwitchesQueuedWork(t *testing.T) {
	lat := linear(t, 1, 4, 8) // ℓ(b) = b + 4 ms
	const slo = 100 * time.Millisecond
	// wakeUnder is when a scheduler with policy p from the start would
	// next act on three requests arriving at 0.
	wakeUnder := func(p Policy) time.Duration {
		rec := newRecorder()
		s, err := New(Config{Policy: p}, rec)
		require.NoError(t, err)
		require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: lat}))
		for _, r := range periodic(0, 3, 0, 0, slo) {
			require.NoError(t, s.Submit(0, r))
		}
		if len(rec.dispatches) > 0 {
			return 0
		}
		next, ok := s.NextWakeup()
		require.True(t, ok)
		return next
	}
	cases := []struct {
		name     string
		from, to Policy
		// wake is when the queued requests are dispatched after the
		// switch at 1 ms (0: within the switch).
		wake time.Duration
	}{
		{"deferred to eager dispatches at once", Deferred{}, Eager{}, 0},
		{"deferred to timeout waits K from the first arrival", Deferred{}, Timeout{K: ms(3)}, ms(3)},
		{"timeout to deferred waits as deferred does", Timeout{K: ms(50)}, Deferred{}, wakeUnder(Deferred{})},
		{"timeout to solo deferred waits for the frontrun", Timeout{K: ms(50)}, Deferred{Solo: true}, wakeUnder(Deferred{Solo: true})},
		{"deferred to flex dispatches at once", Deferred{}, Flex{}, 0},
	}
	require.Greater(t, wakeUnder(Deferred{}), ms(1), "deferred holds them past the switch")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			s, err := New(Config{Policy: tc.from}, rec)
			require.NoError(t, err)
			require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: lat}))
			for _, r := range periodic(0, 3, 0, 0, slo) {
				require.NoError(t, s.Submit(0, r))
			}
			require.Empty(t, rec.dispatches, "held under %v", tc.from)

			require.NoError(t, s.SetPolicy(ms(1), tc.to))
			require.Equal(t, tc.to, s.Policy())
			if tc.wake == 0 {
				require.Len(t, rec.dispatches, 1)
				require.Equal(t, dispatched{At: ms(1), Model: 0, IDs: []uint64{1, 2, 3}}, rec.dispatches[0])
				return
			}
			require.Empty(t, rec.dispatches)
			next, ok := s.NextWakeup()
			require.True(t, ok)
			require.Equal(t, tc.wake, next)
			s.Advance(next)
			require.Len(t, rec.dispatches, 1)
			require.Equal(t, []uint64{1, 2, 3}, rec.dispatches[0].IDs)
			require.Zero(t, rec.infeasible)
		})
	}
}

// A policy that does not validate leaves the scheduler as it was.
func TestSetPolicyRefusesABadPolicy(t *testing.T) {
	s, err := New(Config{}, newRecorder())
	require.NoError(t, err)
	require.ErrorIs(t, s.SetPolicy(0, Flex{Lambda: 0.5}), ErrBadPolicy)
	require.Equal(t, Deferred{}, s.Policy())
}
