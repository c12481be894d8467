package refset

import (
	"errors"
	"fmt"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/interference"
)

// ErrNoPoint is returned when a set cannot answer for an operating point: an
// unknown model, or a (b,p) outside what its profile covers.
var ErrNoPoint = errors.New("no such operating point")

// Side describes a model running batches of b on a gpu-let of size p of this
// set's device, as the interference model sees it: gpulet.InterferenceSide of
// the model's profile, so the planner describes co-locations the same way.
func (s *Set) Side(model string, b, p int) (interference.Side, error) {
	m, ok := s.byName[model]
	if !ok {
		return interference.Side{}, fmt.Errorf("describe %s on %s: %w: unknown model", model, s.Name, ErrNoPoint)
	}
	side, err := gpulet.InterferenceSide(m.Profile, b, p)
	if err != nil {
		return interference.Side{}, fmt.Errorf("describe %s b=%d p=%d on %s: %w", model, b, p, s.Name, ErrNoPoint)
	}
	return side, nil
}

// InterferenceSamples turns the set's measured co-locations into
// interference samples: pair i gives two samples with Pair = i, model 1
// slowed by model 2 and model 2 slowed by model 1, each against its solo
// latency and utilisation at its own (b,p).
func (s *Set) InterferenceSamples() ([]interference.Sample, error) {
	out := make([]interference.Sample, 0, 2*len(s.Pairs))
	for i, c := range s.Pairs {
		a, err := s.Side(c.Model1, c.Batch1, c.Size1)
		if err != nil {
			return nil, fmt.Errorf("build samples of pair %d: %w", i+1, err)
		}
		b, err := s.Side(c.Model2, c.Batch2, c.Size2)
		if err != nil {
			return nil, fmt.Errorf("build samples of pair %d: %w", i+1, err)
		}
		ps := interference.PairSamples(a, b, c.Latency1MS, c.Latency2MS, i)
		out = append(out, ps[0], ps[1])
	}
	return out, nil
}
