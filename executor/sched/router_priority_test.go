package sched

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRouteByShedsWhatOnlyItsDeadlineAllows: a gpu-let that frees at 10 ms
// (ℓ(b) = b + 5 ms) can finish a request arriving at 0 at 16 ms. Due at 20
// ms and admitted by 20, 16 or 15 ms, it is routed, shed (the targets as
// they were) or, due at 14 ms, unreachable as Route has it.
func TestRouteByShedsWhatOnlyItsDeadlineAllows(t *testing.T) {
	l := linear(t, 1, 5, 16)
	target := func() []Target {
		return []Target{{RouteState: RouteState{FreeAt: ms(10), Latency: l}, Credit: 0.5}}
	}
	for _, tc := range []struct {
		name         string
		deadline, by time.Duration
		pick         int
		how          Routing
	}{
		{"room before by", ms(20), ms(20), 0, FreesFirst},
		{"room just by by", ms(20), ms(16), 0, FreesFirst},
		{"room only before the deadline", ms(20), ms(15), -1, Shed},
		{"by past the deadline", ms(20), ms(30), 0, FreesFirst},
		{"no room before the deadline", ms(14), ms(12), 0, Unreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := target()
			pick, how, err := RouteBy(0, tc.deadline, tc.by, ts)
			require.NoError(t, err)
			require.Equal(t, tc.pick, pick)
			require.Equal(t, tc.how, how)
			if how == Shed {
				require.Equal(t, target(), ts, "a shed request changes no target")
			} else {
				require.EqualValues(t, 1, ts[0].Sent)
			}
		})
	}
}

// TestRouteByKeepsRoomForTheHigherLevel drives eight gpu-lets of ResNet50
// (Table 2's ℓ(b) = 1.053·b + 5.072 ms, SLO 25 ms) in virtual time past
// what they serve: 8 000 req/s, 40% of them of the higher of two levels.
// Routed alike, both levels lose about a third. When the lower level is
// admitted only where it finishes a third of its time before its deadline,
// the higher one keeps every request within the SLO and the lower takes
// what is left.
func TestRouteByKeepsRoomForTheHigherLevel(t *testing.T) {
	alike := overload(t, 0)
	require.Less(t, alike.servedShare(true), 0.8)
	require.Less(t, alike.servedShare(false), 0.8)
	ranked := overload(t, 1.0/3)
	require.Greater(t, ranked.servedShare(true), 0.999)
	require.Less(t, ranked.servedShare(false), 0.6)
	require.Greater(t, ranked.served[0]+ranked.served[1], 0.85*(alike.served[0]+alike.served[1]),
		"the reserve costs the two levels together little")
}

// levelTally counts requests by level: [0] the lower, [1] the higher.
type levelTally struct{ sent, served [2]float64 }

func (lt levelTally) servedShare(higher bool) float64 {
	i := 0
	if higher {
		i = 1
	}
	return lt.served[i] / lt.sent[i]
}

// levelSink runs one gpu-let's batches for overload.
type levelSink struct {
	busy bool
	b    Batch
}

func (k *levelSink) Dispatch(_ time.Duration, b Batch) {
	k.busy, k.b = true, b
	k.b.Requests = append([]Request(nil), b.Requests...)
}
func (*levelSink) Reject(time.Duration, Request, Reason) {}
func (k *levelSink) Preempt(time.Duration, Batch)        { k.busy = false }

// overload runs 5 s of the mix of TestRouteByKeepsRoomForTheHigherLevel,
// the lower level admitted by its deadline less reserve of its time, and
// counts the requests of each level that finished by their deadlines.
func overload(t *testing.T, reserve float64) levelTally {
	t.Helper()
	const gpulets, rate, higherShare = 8, 8000.0, 0.4
	l, err := LinearLatency(1053*time.Microsecond, 5072*time.Microsecond, 16)
	require.NoError(t, err)
	slo := 25 * time.Millisecond
	sinks := make([]*levelSink, gpulets)
	scheds := make([]*Scheduler, gpulets)
	targets := make([]Target, gpulets)
	for i := range gpulets {
		sinks[i] = &levelSink{}
		scheds[i], err = New(Config{}, sinks[i])
		require.NoError(t, err)
		require.NoError(t, scheds[i].AddModel(0, 0, ModelConfig{Latency: l}))
	}
	var lt levelTally
	higher := map[uint64]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	gap := func() time.Duration { return time.Duration(rng.ExpFloat64() / rate * 1e9) }
	var now time.Duration
	next, end := gap(), 5*time.Second
	for id := uint64(1); ; {
		done, wake := -1, -1
		tDone, tWake := never, never
		for i, s := range scheds {
			if sinks[i].busy && sinks[i].b.End < tDone {
				tDone, done = sinks[i].b.End, i
			}
			if w, ok := s.NextWakeup(); ok && w < tWake {
				tWake, wake = max(w, now), i
			}
		}
		arrives := next < end
		switch {
		case done >= 0 && tDone <= tWake && (!arrives || tDone <= next):
			now = tDone
			k := sinks[done]
			k.busy = false
			for _, r := range k.b.Requests {
				if k.b.End <= r.Deadline && higher[r.ID] {
					lt.served[1]++
				} else if k.b.End <= r.Deadline {
					lt.served[0]++
				}
			}
			require.NoError(t, scheds[done].BatchDone(now, k.b.Seq))
		case arrives && next <= tWake:
			now = next
			r := Request{ID: id, Arrival: now, Deadline: now + slo}
			id++
			higher[r.ID] = rng.Float64() < higherShare
			by := r.Deadline
			if higher[r.ID] {
				lt.sent[1]++
			} else {
				lt.sent[0]++
				by -= time.Duration(reserve * float64(slo))
			}
			for i, s := range scheds {
				s.Advance(now)
				targets[i].RouteState, err = s.RouteState(now, 0)
				require.NoError(t, err)
			}
			j, how, err := RouteBy(now, r.Deadline, by, targets)
			require.NoError(t, err)
			if how != Shed {
				require.NoError(t, scheds[j].Submit(now, r))
			}
			next = now + gap()
		case wake >= 0:
			now = tWake
			scheds[wake].Advance(now)
		default:
			return lt
		}
	}
}
