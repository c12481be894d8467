package refset

import (
	"errors"
	"fmt"

	"github.com/gpulet/gpuletd/interference"
)

// ErrNoInterference is returned when a set has no co-location data to model
// interference with (the whole-GPU sets).
var ErrNoInterference = errors.New("no interference data")

// ErrOversubscribed is returned when two gpu-lets asked to share a GPU need
// more than all of it.
var ErrOversubscribed = errors.New("gpu-lets exceed the GPU")

// Placement is a model running batches of Batch on a gpu-let of Size
// percent.
type Placement struct {
	Model string
	Batch int
	Size  int
}

// CoLocation source values for CoLatency.Source.
const (
	SourceMeasured  = "measured"  // iGniter measured this exact pair
	SourcePredicted = "predicted" // solo × the interference model's factor
)

// CoLatency is what Physics answers for two co-located gpu-lets.
type CoLatency struct {
	LatencyMS [2]float64 // each model's batch latency while co-located
	SoloMS    [2]float64 // each model's solo batch latency
	Source    string     // SourceMeasured or SourcePredicted
}

// Factor returns the slowdown of side i (0 or 1).
func (c CoLatency) Factor(i int) float64 { return c.LatencyMS[i] / c.SoloMS[i] }

// Physics is the emulated behaviour of a set's device: solo latencies from
// the profiles and co-located latencies from the measured pairs or the
// interference model. It is immutable and its methods are pure: the same
// question always gets the same answer (jitter is the caller's, drawn from
// its own seeded generator).
type Physics struct {
	set      *Set
	model    *interference.Model
	measured map[pairKey][2]float64
}

type pairKey struct{ a, b Placement }

// NewPhysics builds the physics of a set. model is the interference model
// for co-locations that were not measured; nil trains one on the set's own
// measured pairs (interference.Train over interference.Candidates with
// interference.DefaultSeed), and a set without pairs then has none.
func NewPhysics(set *Set, model *interference.Model) (*Physics, error) {
	ph := &Physics{set: set, model: model, measured: map[pairKey][2]float64{}}
	for _, c := range set.Pairs {
		a := Placement{Model: c.Model1, Batch: c.Batch1, Size: c.Size1}
		b := Placement{Model: c.Model2, Batch: c.Batch2, Size: c.Size2}
		ph.measured[pairKey{a, b}] = [2]float64{c.Latency1MS, c.Latency2MS}
	}
	if model == nil && len(set.Pairs) > 0 {
		samples, err := set.InterferenceSamples()
		if err != nil {
			return nil, fmt.Errorf("build physics of %s: %w", set.Name, err)
		}
		m, _, err := interference.Train(samples, interference.Candidates(), interference.DefaultSeed)
		if err != nil {
			return nil, fmt.Errorf("build physics of %s: %w", set.Name, err)
		}
		ph.model = m
	}
	return ph, nil
}

// Set returns the set the physics answers for.
func (ph *Physics) Set() *Set { return ph.set }

// Model returns the interference model (nil when the set has none).
func (ph *Physics) Model() *interference.Model { return ph.model }

// Solo returns the latency of a batch running alone on its gpu-let.
func (ph *Physics) Solo(p Placement) (float64, error) {
	m, ok := ph.set.Model(p.Model)
	if !ok {
		return 0, fmt.Errorf("solo latency of %s on %s: %w: unknown model", p.Model, ph.set.Name, ErrNoPoint)
	}
	ms, ok := m.Profile.Latency(p.Batch, p.Size)
	if !ok {
		return 0, fmt.Errorf("solo latency of %s b=%d p=%d on %s: %w", p.Model, p.Batch, p.Size, ph.set.Name, ErrNoPoint)
	}
	return ms, nil
}

// CoLocated returns the latencies of two models running at the same time on
// two gpu-lets of one GPU: the measured latencies where iGniter measured
// exactly this pair (in either order), otherwise each side's solo latency
// times the interference model's predicted factor.
func (ph *Physics) CoLocated(a, b Placement) (CoLatency, error) {
	if a.Size+b.Size > 100 {
		return CoLatency{}, fmt.Errorf("co-locate %s (%d%%) and %s (%d%%): %w", a.Model, a.Size, b.Model, b.Size, ErrOversubscribed)
	}
	var out CoLatency
	var err error
	if out.SoloMS[0], err = ph.Solo(a); err != nil {
		return CoLatency{}, err
	}
	if out.SoloMS[1], err = ph.Solo(b); err != nil {
		return CoLatency{}, err
	}
	if v, ok := ph.measured[pairKey{a, b}]; ok {
		out.LatencyMS, out.Source = v, SourceMeasured
		return out, nil
	}
	if v, ok := ph.measured[pairKey{b, a}]; ok {
		out.LatencyMS, out.Source = [2]float64{v[1], v[0]}, SourceMeasured
		return out, nil
	}
	if ph.model == nil {
		return CoLatency{}, fmt.Errorf("co-locate %s and %s on %s: %w", a.Model, b.Model, ph.set.Name, ErrNoInterference)
	}
	sa, err := ph.set.Side(a.Model, a.Batch, a.Size)
	if err != nil {
		return CoLatency{}, err
	}
	sb, err := ph.set.Side(b.Model, b.Batch, b.Size)
	if err != nil {
		return CoLatency{}, err
	}
	for i, s := range []interference.Sample{{Self: sa, Other: sb}, {Self: sb, Other: sa}} {
		f, err := ph.model.PredictChecked(s)
		if err != nil {
			return CoLatency{}, fmt.Errorf("co-locate %s and %s on %s: %w", a.Model, b.Model, ph.set.Name, err)
		}
		out.LatencyMS[i] = out.SoloMS[i] * f
	}
	out.Source = SourcePredicted
	return out, nil
}
