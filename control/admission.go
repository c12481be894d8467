package control

import (
	"time"

	"github.com/gpulet/gpuletd/gpulet"
)

// Admission holds each model that a plan of an overloaded node holds back
// (FairShare's cap) to the rate the plan gives it, before routing: its
// requests beyond that rate are refused at once, for that model only,
// instead of queueing in front of other models' requests on shared
// gpu-lets until their deadlines pass. Models the plan does not hold back
// are not limited. The daemon and the simulator admit through it; it is not
// safe for concurrent use.
type Admission struct {
	buckets map[string]*bucket
}

// bucket is a token bucket: rate tokens per second, at most burst.
type bucket struct {
	rate, burst, tokens float64
	at                  time.Duration
}

// NewAdmission limits the models plan holds back at overload (those with
// both an assigned rate and an unscheduled one) that share a gpu-let with
// another model to their assigned rate, with a burst of what that rate
// brings within the model's SLO (as its placements carry it) and at least
// two of its planned batches. A held-back model alone on its gpu-lets is not limited:
// its excess delays only itself, and its executors refuse what cannot meet
// its deadline knowing their real speed. prev carries each limited model's
// tokens over.
func NewAdmission(plan *gpulet.Plan, prev *Admission) *Admission {
	a := &Admission{buckets: map[string]*bucket{}}
	if plan == nil {
		return a
	}
	assigned := plan.Assigned()
	shared, batch, sloMS := map[string]bool{}, map[string]int{}, map[string]float64{}
	for _, g := range plan.GPUs {
		for _, l := range g.GPULets {
			for _, m := range l.Models {
				shared[m.Name] = shared[m.Name] || len(l.Models) > 1
				batch[m.Name] = max(batch[m.Name], m.Batch)
				sloMS[m.Name] = m.SLOMS
			}
		}
	}
	for name, held := range plan.Unscheduled {
		rate := assigned[name]
		if held <= 0 || rate <= 0 || !shared[name] {
			continue
		}
		b := &bucket{rate: rate, burst: max(1, rate*sloMS[name]/1000, 2*float64(batch[name]))}
		b.tokens = b.burst
		if prev != nil {
			if old := prev.buckets[name]; old != nil {
				b.tokens, b.at = min(old.tokens, b.burst), old.at
			}
		}
		a.buckets[name] = b
	}
	return a
}

// Admit tells whether a request of model arriving at now is within its
// share (now on any clock that only grows).
func (a *Admission) Admit(model string, now time.Duration) bool {
	if a == nil {
		return true
	}
	b := a.buckets[model]
	if b == nil {
		return true
	}
	if now > b.at {
		b.tokens = min(b.burst, b.tokens+b.rate*(now-b.at).Seconds())
		b.at = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Limited returns the rate a model is held to, 0 when it is not limited.
func (a *Admission) Limited(model string) float64 {
	if a == nil || a.buckets[model] == nil {
		return 0
	}
	return a.buckets[model].rate
}
