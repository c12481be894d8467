package sched

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestShareKeepsAFloodToItsShare: one gpu-let, ℓ(b) = b + 5 ms up to
// batch 8 for both models. A floods at 1000 req/s with a 50 ms SLO (the
// gpu-let serves about 615 req/s of it alone); B asks 20 req/s with a 40 ms
// SLO. By urgency alone A's backlog always has the more urgent head and B's
// requests expire; with shares (A 400 req/s, B 30 req/s) B loses nothing
// and what A loses is A's alone (under deferred A keeps at least its share;
// eager's urgent-head batches of one serve less of a flood either way).
func TestShareKeepsAFloodToItsShare(t *testing.T) {
	l := linear(t, 1, 5, 8)
	var reqs []Request
	id := uint64(0)
	for at := time.Duration(0); at < 2*time.Second; at += time.Millisecond {
		id++
		reqs = append(reqs, Request{ID: id, Model: 0, Arrival: at, Deadline: at + ms(50)})
		if at%(50*time.Millisecond) == 0 {
			id++
			reqs = append(reqs, Request{ID: id, Model: 1, Arrival: at, Deadline: at + ms(40)})
		}
	}
	lost := func(rec *recorder, model ModelID) int {
		n := 0
		for _, r := range rec.rejects {
			if reqs[r.ID-1].Model == model {
				n++
			}
		}
		return n
	}
	served := func(rec *recorder, model ModelID) int {
		n := 0
		for _, d := range rec.dispatches {
			if d.Model == model {
				n += len(d.IDs)
			}
		}
		return n
	}
	for _, p := range []Policy{Deferred{}, Eager{}} {
		t.Run(p.String(), func(t *testing.T) {
			spec := func(a, b ModelConfig) []ExecutorSpec {
				a.Latency, b.Latency = l, l
				return []ExecutorSpec{{Config: Config{Policy: p}, Models: []ModelSpec{{ID: 0, ModelConfig: a}, {ID: 1, ModelConfig: b}}}}
			}
			unshared, _ := simulate(t, spec(ModelConfig{}, ModelConfig{}), reqs)
			require.Greater(t, lost(unshared, 1), 5, "the case needs B to suffer from A's flood without shares")

			rec, st := simulate(t, spec(ModelConfig{ShareRate: 400, ShareBurst: 20}, ModelConfig{ShareRate: 30, ShareBurst: 2}), reqs)
			require.Zero(t, lost(rec, 1), "B keeps all of its requests")
			require.Zero(t, st.Late)
			require.GreaterOrEqual(t, float64(served(rec, 0)), 0.85*float64(served(unshared, 0)), "the shares cost A little")
			if _, ok := p.(Deferred); ok {
				require.GreaterOrEqual(t, served(rec, 0), 800, "A keeps at least its share")
			}
			require.Positive(t, lost(rec, 0), "A's excess is refused")
		})
	}
}

func TestSetShare(t *testing.T) {
	s, err := New(Config{Policy: Deferred{}}, newRecorder())
	require.NoError(t, err)
	require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: linear(t, 1, 5, 8)}))
	require.ErrorIs(t, s.SetShare(0, 1, 10, 2), ErrUnknownModel)
	require.ErrorIs(t, s.SetShare(0, 0, 10, 0.5), ErrBadConfig)
	require.ErrorIs(t, s.SetShare(0, 0, -1, 2), ErrBadConfig)
	require.NoError(t, s.SetShare(0, 0, 10, 2))
	m := s.model(0)
	m.share.charge(0, 2)
	require.Zero(t, m.shareLag(0), "the burst is spent, not overspent")
	m.share.charge(0, 1)
	require.Equal(t, overLag, m.shareLag(0), "one request beyond the share")
	require.Zero(t, m.shareLag(ms(100)), "10 req/s earns it back in 100 ms")
	m.share.charge(ms(100), 50)
	require.InDelta(t, -2, m.share.tokens, 1e-9, "a model owes at most its burst")
	require.NoError(t, s.SetShare(ms(100), 0, 20, 4))
	require.Equal(t, overLag, m.shareLag(ms(100)), "a new share keeps the standing")
	require.NoError(t, s.SetShare(ms(100), 0, 0, 0))
	require.Zero(t, m.shareLag(ms(100)), "no share: never behind")
}
