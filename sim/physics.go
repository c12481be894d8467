package sim

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/gpulet/gpuletd/profiler/refset"
)

// How the simulated GPUs run batches.
//
// A batch of b on a gpu-let of size p has a solo time L(b,p) from the
// physics of its reference set (refset.Physics.Solo: the same profile the
// planner reads) times a lognormal jitter factor of mean 1 drawn per batch
// (the emulated engine's model, executor/engine/timing.go). While another
// gpu-let of the same GPU runs a batch too, the batch progresses at
// 1/f of its solo speed, f being the physics' co-located slowdown of this
// pair (refset.Physics.CoLocated: iGniter's measurement where it measured
// exactly this pair, else solo × the interference model's prediction); with
// several neighbours running, the worst f applies. Each batch's remaining
// solo work is carried over whenever a neighbour starts or stops, so a batch
// that overlaps a neighbour for part of its run is slowed for that part
// only. MIG instances do not interfere. When the running gpu-lets of a GPU
// add up to more than 100% (an old gpu-let draining beside its successor
// during a reorganization), each runs at 100/Σp of its speed on top of
// that, as time-slicing would share the GPU.

// jitterRand draws the batch-time jitter.
type jitterRand struct {
	rng         *rand.Rand
	mean, sigma float64
	off         bool
}

func newJitterRand(cv float64, seed uint64) *jitterRand {
	if cv <= 0 {
		return &jitterRand{off: true}
	}
	// exp(N(μ, σ²)) has mean exp(μ+σ²/2) and CV² = exp(σ²)−1.
	s2 := math.Log1p(cv * cv)
	return &jitterRand{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), mean: -s2 / 2, sigma: math.Sqrt(s2)}
}

// jitter returns the next batch's time factor.
func (e *engine) jitter() float64 {
	j := e.jit
	if j.off {
		return 1
	}
	return math.Exp(j.mean + j.sigma*j.rng.NormFloat64())
}

// pairKey names one co-location the physics is asked about.
type pairKey struct {
	typ  string
	a, b refset.Placement
}

// pairFactor is the slowdown of a's batch while b's runs beside it on a GPU
// of type typ; 1 where the physics has no answer (a whole-GPU set without
// co-location data).
func (e *engine) pairFactor(g *gpu, a, b refset.Placement) float64 {
	k := pairKey{typ: g.typ, a: a, b: b}
	if f, ok := e.pairs[k]; ok {
		return f
	}
	f := 1.0
	if a.Size+b.Size <= 100 {
		if co, err := g.ph.CoLocated(a, b); err == nil {
			if v := co.Factor(0); v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
				f = v
			}
		} else {
			e.physMiss++
		}
	}
	e.pairs[k] = f
	return f
}

// coRun recomputes the speed of every running batch on g after a batch
// there started or stopped at now.
func (e *engine) coRun(g *gpu, now time.Duration) {
	if len(g.lets) < 2 {
		if l := g.only(); l != nil && l.busy && l.slow != 1 {
			l.setSlow(now, 1)
		}
		return
	}
	total := 0
	for _, l := range g.lets {
		if l.busy {
			total += l.size
		}
	}
	for _, l := range g.lets {
		if !l.busy {
			continue
		}
		f := 1.0
		if !g.mig {
			self := refset.Placement{Model: e.models[l.model].profile, Batch: l.batch, Size: l.size}
			for _, o := range g.lets {
				if o == l || !o.busy {
					continue
				}
				other := refset.Placement{Model: e.models[o.model].profile, Batch: o.batch, Size: o.size}
				f = max(f, e.pairFactor(g, self, other))
			}
		}
		if total > 100 && !g.mig {
			// MPS gpu-lets asking for more than the GPU share it. MIG
			// sizes are rounded percentages of slices (2g+2g+3g is
			// 29+29+43 = 101%) that the hardware always holds.
			f *= float64(total) / 100
		}
		if f != l.slow {
			l.setSlow(now, f)
		}
	}
}

// only returns g's single gpu-let.
func (g *gpu) only() *glet {
	if len(g.lets) == 1 {
		return g.lets[0]
	}
	return nil
}

// setSlow changes the running batch's slowdown at now.
func (l *glet) setSlow(now time.Duration, f float64) {
	l.work = max(l.work-float64(now-l.upd)/l.slow, 0)
	l.upd, l.slow = now, f
	l.end = now + workDuration(l.work*f)
}

// workDuration is work (ns, fractional) as a duration, rounded to the
// nearest nanosecond as the scheduler rounds ℓ(b) (sched.NewLatency): a
// batch that takes exactly its planned time then ends exactly when the
// scheduler planned. Rounding up made every batch dispatched at its latest
// moment (a deferred batch whose ℓ(n+1) equals ℓ(n), as flat ParvaGPU
// segments have) end 1 ns after its deadline and count late.
func workDuration(work float64) time.Duration {
	return time.Duration(math.Round(work))
}
