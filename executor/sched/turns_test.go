package sched

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTurnsKeepAFloodFromTheOthers: one gpu-let, ℓ(b) = b + 5 ms up to
// batch 8 for both models. A floods at 1000 req/s with a 50 ms SLO (the
// gpu-let serves about 615 req/s of it alone); B asks 20 req/s with a 40 ms
// SLO. By urgency alone A's backlog always has the more urgent head and B's
// requests expire (38 or 39 of its 40 under either policy before the rule);
// with turns B waits for at most one batch of A, loses nothing, and what is
// lost is A's alone (eager's urgent-head batches of one serve less of a
// flood than deferred's).
func TestTurnsKeepAFloodFromTheOthers(t *testing.T) {
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
			spec := []ExecutorSpec{{Config: Config{Policy: p}, Models: []ModelSpec{
				{ID: 0, ModelConfig: ModelConfig{Latency: l}}, {ID: 1, ModelConfig: ModelConfig{Latency: l}},
			}}}
			rec, st := simulate(t, spec, reqs)
			require.Zero(t, lost(rec, 1), "B keeps all of its requests")
			require.Zero(t, st.Late)
			if _, ok := p.(Deferred); ok {
				require.GreaterOrEqual(t, served(rec, 0), 1000, "A keeps most of the gpu-let")
			} else {
				require.GreaterOrEqual(t, served(rec, 0), 300)
			}
			require.Positive(t, lost(rec, 0), "A's excess is refused")
		})
	}
}

func TestOwesTurn(t *testing.T) {
	// ℓ(b) = b + 5 ms. m's next batch, from its head due at 48 ms, is
	// ℓ(2) = 7 ms from now = 33 (its two queued requests) and ends at 40; a
	// head of the other that arrived at 5 ms (due at 45) can no longer
	// finish then (40 + 6 > 45), one that arrived at 8 can.
	l := linear(t, 1, 5, 8)
	tests := []struct {
		name         string
		mLast, oLast time.Duration
		oHeads       []time.Duration
		owes         bool
	}{
		{"the other waited through m's batch and would miss", ms(10), neverRan, []time.Duration{ms(5)}, true},
		{"the other can still finish after m's batch", ms(10), neverRan, []time.Duration{ms(8)}, false},
		{"the other came after m's batch ended", ms(1), neverRan, []time.Duration{ms(5)}, false},
		{"the other came while m's batch ran", ms(4), neverRan, []time.Duration{ms(5)}, true},
		{"the other ran after m", ms(10), ms(20), []time.Duration{ms(5)}, false},
		{"the other has nothing queued", ms(10), neverRan, nil, false},
		{"m never ran", neverRan, neverRan, []time.Duration{ms(5)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{Policy: Eager{}}, newRecorder())
			require.NoError(t, err)
			require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: l}))
			require.NoError(t, s.AddModel(0, 1, ModelConfig{Latency: l}))
			m, o := s.model(0), s.model(1)
			m.lastStart, m.lastEnd, o.lastStart = tc.mLast, tc.mLast+ms(2), tc.oLast
			s.enqueue(m, Request{ID: 1, Arrival: ms(8), Deadline: ms(48)})
			s.enqueue(m, Request{ID: 2, Arrival: ms(12), Deadline: ms(52)})
			for i, a := range tc.oHeads {
				s.enqueue(o, Request{ID: uint64(10 + i), Model: 1, Arrival: a, Deadline: a + ms(40)})
			}
			require.Equal(t, tc.owes, s.owesTurn(m, ms(33)))
		})
	}
}
