package sched

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// checker is an Observer that checks every decision of a simulation against
// the scheduler's promises, with the models' latencies at hand:
//
//   - a dispatched batch holds 1..MaxBatch requests of its model, in
//     deadline order, ends ℓ(|B|) after it starts and by every deadline in it;
//   - a request rejected as DeadlineUnreachable could not finish alone then,
//     and one Dropped could not finish after the batch of its model that its
//     gpu-let dispatches right after, at the same instant;
//   - every request is answered exactly once (completed or rejected).
type checker struct {
	lat      map[ModelID]Latency
	answers  map[uint64]int
	dropped  map[int][]droppedAt // per gpu-let: drops awaiting their batch
	problems []string
}

type droppedAt struct {
	at time.Duration
	r  Request
}

func newChecker(lat map[ModelID]Latency) *checker {
	return &checker{lat: lat, answers: map[uint64]int{}, dropped: map[int][]droppedAt{}}
}

func (c *checker) fail(format string, args ...any) {
	if len(c.problems) < 10 {
		c.problems = append(c.problems, fmt.Sprintf(format, args...))
	}
}

func (c *checker) Dispatched(exec int, b Batch) {
	l := c.lat[b.Model]
	k := len(b.Requests)
	switch {
	case k < 1 || k > l.MaxBatch():
		c.fail("exec %d batch %d: %d requests, max %d", exec, b.Seq, k, l.MaxBatch())
		return
	case b.End != b.Start+l.At(k):
		c.fail("exec %d batch %d: ends at %v, not start %v + ℓ(%d)", exec, b.Seq, b.End, b.Start, k)
	}
	for i, r := range b.Requests {
		if r.Model != b.Model || r.Deadline < b.End || (i > 0 && r.Deadline < b.Requests[i-1].Deadline) {
			c.fail("exec %d batch %d: request %+v does not belong (end %v)", exec, b.Seq, r, b.End)
		}
	}
	for _, d := range c.dropped[exec] {
		if d.at != b.Start || d.r.Model != b.Model || b.End+l.At(1) <= d.r.Deadline {
			c.fail("request %+v dropped at %v, but it could finish after the batch %+v", d.r, d.at, b)
		}
	}
	c.dropped[exec] = c.dropped[exec][:0]
}

func (c *checker) Completed(exec int, b Batch) {
	for _, r := range b.Requests {
		c.answers[r.ID]++
	}
}

func (c *checker) Preempted(int, time.Duration, Batch) {}

func (c *checker) Rejected(exec int, now time.Duration, r Request, why Reason) {
	c.answers[r.ID]++
	l1 := c.lat[r.Model].At(1)
	switch why {
	case DeadlineUnreachable:
		if now+l1 <= r.Deadline {
			c.fail("request %d rejected at %v as unreachable, but it could finish alone by %v", r.ID, now, r.Deadline)
		}
	case Dropped:
		c.dropped[exec] = append(c.dropped[exec], droppedAt{now, r})
	}
}

// randomLatency is a latency table with MaxBatch 1..16: linear, or measured
// at a few sizes with a fixed cost that appears at some batch size (so that
// the number of requests per unit of time is not monotone in the batch).
func randomLatency(t *testing.T, rng *rand.Rand) Latency {
	maxB := 1 + rng.IntN(16)
	alpha := 0.1 + 2*rng.Float64()
	beta := 0.5 + 8*rng.Float64()
	if rng.IntN(2) == 0 {
		l, err := LinearLatency(ms(alpha), ms(beta), maxB)
		require.NoError(t, err)
		return l
	}
	var pts []LatencyPoint
	step := 0.0
	for b := 1; b <= maxB; b++ {
		if rng.IntN(4) == 0 {
			step += 5 * rng.Float64()
		}
		pts = append(pts, LatencyPoint{Batch: b, MS: alpha*float64(b) + beta + step})
	}
	l, err := NewLatency(pts, 1+0.5*rng.Float64(), ConstantOverhead(time.Duration(rng.IntN(200))*time.Microsecond), 0)
	require.NoError(t, err)
	return l
}

// TestRandomWorkloadInvariants runs random workloads (1–5 models with random
// profiles and SLOs, on 1–3 gpu-lets each holding a random subset, Poisson
// arrivals from light load to heavy overload, sometimes short queues) under
// every policy and checks every decision with the checker.
func TestRandomWorkloadInvariants(t *testing.T) {
	policies := []Policy{Deferred{}, Deferred{Solo: true}, Deferred{HeadOnly: true}, published,
		chainGuard, blockGuard, ratioDrop, Eager{}, Timeout{K: ms(2)}, Flex{}, Flex{Preempt: true}}
	var seen [numReasons]uint64 // drops, full queues, preemptions (as Preempted)
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 77))
		nm := 1 + rng.IntN(5)
		lat := map[ModelID]Latency{}
		var streams []Stream
		var models []ModelSpec
		for i := range nm {
			l := randomLatency(t, rng)
			id := ModelID(i)
			lat[id] = l
			slo := l.At(1) + time.Duration(float64(l.At(l.MaxBatch()))*(0.5+3*rng.Float64()))
			work := float64(l.At(l.MaxBatch())) / 1e9 / float64(l.MaxBatch()) // s per request at full batches
			rate := (0.2 + 2.5*rng.Float64()) / work / float64(nm)
			streams = append(streams, Stream{Model: id, Rate: rate, SLO: slo})
			mq := 0
			if rng.IntN(4) == 0 {
				mq = 1 + rng.IntN(20)
			}
			models = append(models, ModelSpec{ID: id, ModelConfig: ModelConfig{Latency: l, MaxQueue: mq}})
		}
		ng := 1 + rng.IntN(3)
		placement := make([][]ModelSpec, ng)
		for i, m := range models {
			placement[i%ng] = append(placement[i%ng], m) // every model somewhere
			for g := range ng {
				if g != i%ng && rng.IntN(2) == 0 {
					placement[g] = append(placement[g], m)
				}
			}
		}
		for _, p := range policies {
			t.Run(fmt.Sprintf("seed=%d/%s", seed, p), func(t *testing.T) {
				var specs []ExecutorSpec
				for _, ms := range placement {
					if len(ms) > 0 {
						specs = append(specs, ExecutorSpec{Config: Config{Policy: p}, Models: ms})
					}
				}
				src, err := NewPoissonSource(streams, 4000, seed)
				require.NoError(t, err)
				c := newChecker(lat)
				sim, err := NewSim(specs, c)
				require.NoError(t, err)
				st, err := sim.Run(src)
				require.NoError(t, err)
				require.Empty(t, c.problems)
				for exec, ds := range c.dropped {
					require.Empty(t, ds, "exec %d: drops with no batch", exec)
				}
				require.Len(t, c.answers, 4000)
				for id, n := range c.answers {
					require.Equal(t, 1, n, "request %d answered %d times", id, n)
				}
				require.Equal(t, st.Requests, st.Completed+st.Rejections())
				require.Zero(t, st.Late)
				seen[Dropped] += st.Rejected[Dropped]
				seen[QueueFull] += st.Rejected[QueueFull]
				seen[Preempted] += st.Preemptions
			})
		}
	}
	// the checks above were not vacuous
	require.NotZero(t, seen[Dropped], "no head was dropped")
	require.NotZero(t, seen[QueueFull], "no queue was full")
	require.NotZero(t, seen[Preempted], "no batch was preempted")
}
