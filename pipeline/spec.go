package pipeline

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// ErrBadPipeline is wrapped by every error about a malformed pipeline.
var ErrBadPipeline = errors.New("bad pipeline")

// LatencyFunc is a variant's batch time on one worker: the milliseconds a
// batch of b takes, ok false where b was not profiled.
type LatencyFunc func(b int) (ms float64, ok bool)

// Variant is one model that can serve a task.
type Variant struct {
	// Name is the model's name (its repository or reference-set name).
	Name string
	// Accuracy is the variant's accuracy, in (0, 1], normalised within its
	// family so that the most accurate variant is near 1.
	Accuracy float64
	// Fanout is how many requests of the next task one request served by
	// this variant makes, on average (Loki's multiplicative factor); the
	// last task's variants have none.
	Fanout float64
	// Latency is the batch time on one worker; MaxBatch the largest batch.
	Latency  LatencyFunc
	MaxBatch int
}

// Task is one stage of a pipeline.
type Task struct {
	Name     string
	Variants []Variant
}

// Pipeline is a chain of tasks with an end-to-end SLO.
type Pipeline struct {
	Name string
	// SLO bounds a request's time from arrival at the first task to the
	// end of its last descendant.
	SLO   time.Duration
	Tasks []Task
	// PathAccuracy, when set, gives the end-to-end accuracy of a path (one
	// variant per task, named by PathKey) where it is not the product of the
	// variants' accuracies; a path it lacks is the product.
	PathAccuracy map[string]float64
	// Hop is the time a request spends between two tasks (transfer and
	// hand-over), taken off the SLO once per hop.
	Hop time.Duration
	// MinAccuracy is the least end-to-end accuracy the operator accepts,
	// as a share of FullAccuracy in [0, 1]: accuracy scaling goes no lower,
	// and the demand beyond what that carries is dropped. 0 sets no floor.
	MinAccuracy float64
}

// PathKey names a path: its variants' names joined by "/".
func PathKey(variants ...string) string { return strings.Join(variants, "/") }

// Validate checks the pipeline: at least one task, every task at least one
// variant with a name unique in the task (a model may serve several tasks,
// as one model may run several steps of a Triton ensemble), an accuracy in (0, 1], a
// latency function that answers for batch 1, and a fanout on every task but
// the last.
func (p *Pipeline) Validate() error {
	if p.SLO <= 0 {
		return fmt.Errorf("validate pipeline %q: %w: SLO %v is not positive", p.Name, ErrBadPipeline, p.SLO)
	}
	if len(p.Tasks) == 0 {
		return fmt.Errorf("validate pipeline %q: %w: no tasks", p.Name, ErrBadPipeline)
	}
	for i, t := range p.Tasks {
		seen := map[string]bool{} // one model may serve several tasks, once in each
		if len(t.Variants) == 0 {
			return fmt.Errorf("validate pipeline %q: %w: task %q has no variants", p.Name, ErrBadPipeline, t.Name)
		}
		for _, v := range t.Variants {
			switch {
			case v.Name == "" || seen[v.Name]:
				return fmt.Errorf("validate pipeline %q: %w: task %q: variant name %q is empty or used twice in the task", p.Name, ErrBadPipeline, t.Name, v.Name)
			case !(v.Accuracy > 0 && v.Accuracy <= 1):
				return fmt.Errorf("validate pipeline %q: %w: variant %q: accuracy %v is outside (0, 1]", p.Name, ErrBadPipeline, v.Name, v.Accuracy)
			case v.Latency == nil || v.MaxBatch < 1:
				return fmt.Errorf("validate pipeline %q: %w: variant %q has no latency profile", p.Name, ErrBadPipeline, v.Name)
			case i < len(p.Tasks)-1 && !(v.Fanout >= 0 && !math.IsInf(v.Fanout, 0)):
				return fmt.Errorf("validate pipeline %q: %w: variant %q: fanout %v is not a number ≥ 0", p.Name, ErrBadPipeline, v.Name, v.Fanout)
			}
			if _, ok := v.Latency(1); !ok {
				return fmt.Errorf("validate pipeline %q: %w: variant %q has no latency for a batch of 1", p.Name, ErrBadPipeline, v.Name)
			}
			seen[v.Name] = true
		}
	}
	if !(p.MinAccuracy >= 0 && p.MinAccuracy <= 1) {
		return fmt.Errorf("validate pipeline %q: %w: min accuracy %v is outside [0, 1]", p.Name, ErrBadPipeline, p.MinAccuracy)
	}
	for k, a := range p.PathAccuracy {
		if !(a >= 0 && a <= 1) {
			return fmt.Errorf("validate pipeline %q: %w: path %q: accuracy %v is outside [0, 1]", p.Name, ErrBadPipeline, k, a)
		}
	}
	return nil
}

// pathAccuracy is the end-to-end accuracy of the path through variant
// indices ks (one per task).
func (p *Pipeline) pathAccuracy(ks []int) float64 {
	if len(p.PathAccuracy) > 0 {
		names := make([]string, len(ks))
		for i, k := range ks {
			names[i] = p.Tasks[i].Variants[k].Name
		}
		if a, ok := p.PathAccuracy[PathKey(names...)]; ok {
			return a
		}
	}
	a := 1.0
	for i, k := range ks {
		a *= p.Tasks[i].Variants[k].Accuracy
	}
	return a
}

// bestVariant is the index of the task's most accurate variant (the first
// of equals).
func (t *Task) bestVariant() int {
	best := 0
	for k, v := range t.Variants {
		if v.Accuracy > t.Variants[best].Accuracy {
			best = k
		}
	}
	return best
}

// FullAccuracy is the end-to-end accuracy with every task's most accurate
// variant.
func (p *Pipeline) FullAccuracy() float64 {
	ks := make([]int, len(p.Tasks))
	for i := range p.Tasks {
		ks[i] = p.Tasks[i].bestVariant()
	}
	return p.pathAccuracy(ks)
}

// budgetMS is the processing time the tasks' batches may add up to: half
// the SLO, the other half left to queueing (a request that arrives just
// after a batch started waits for it: Loki §4.1, after Nexus and Proteus),
// less the hops.
func (p *Pipeline) budgetMS() float64 {
	hops := time.Duration(len(p.Tasks)-1) * p.Hop
	return float64(p.SLO/2-hops) / float64(time.Millisecond)
}

// batchSizes are the batch sizes a plan may configure (Loki's set B: the
// powers of two its profiles measured).
var batchSizes = []int{1, 2, 4, 8, 16, 32, 64, 128, 256}

// batchPoint is one batch size a plan may pick and its batch time.
type batchPoint struct {
	batch int
	ms    float64
}

// batchCurve is v's batch sizes the plan may pick, ascending, with their
// times.
func batchCurve(v Variant) []batchPoint {
	var out []batchPoint
	add := func(b int) {
		if ms, ok := v.Latency(b); ok {
			out = append(out, batchPoint{b, ms})
		}
	}
	for _, b := range batchSizes {
		if b > v.MaxBatch {
			break
		}
		add(b)
	}
	if !slices.ContainsFunc(out, func(pt batchPoint) bool { return pt.batch == v.MaxBatch }) {
		add(v.MaxBatch)
	}
	return out
}

// curves holds every variant's batchCurve, per task, per variant: read once
// for all the searches of one call.
type curves [][][]batchPoint

func curvesOf(p *Pipeline) curves {
	c := make(curves, len(p.Tasks))
	for i, t := range p.Tasks {
		for _, v := range t.Variants {
			c[i] = append(c[i], batchCurve(v))
		}
	}
	return c
}
