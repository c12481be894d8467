package sched

import (
	"testing"

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
