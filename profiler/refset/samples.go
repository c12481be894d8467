package refset

import (
	"errors"
	"fmt"
	"math"

	"github.com/gpulet/gpuletd/interference"
)

// ErrNoPoint is returned when a set cannot answer for an operating point: an
// unknown model, or a (b,p) outside what its profile covers.
var ErrNoPoint = errors.New("no such operating point")

// Side describes a model running batches of b on a gpu-let of size p of this
// set's device, as the interference model sees it: solo latency and solo
// utilisation at (b,p) from the profile (interpolated between profiled
// points as gpulet.Profile does).
func (s *Set) Side(model string, b, p int) (interference.Side, error) {
	m, ok := s.byName[model]
	if !ok {
		return interference.Side{}, fmt.Errorf("describe %s on %s: %w: unknown model", model, s.Name, ErrNoPoint)
	}
	ms, ok := m.Profile.Latency(b, p)
	if !ok {
		return interference.Side{}, fmt.Errorf("describe %s b=%d p=%d on %s: %w", model, b, p, s.Name, ErrNoPoint)
	}
	b1, ok := m.Profile.Latency(1, p)
	if !ok {
		b1 = math.NaN()
	}
	// Utilisation answers UnknownUtil (all NaN) where the profile has none.
	u, _ := m.Profile.Utilisation(b, p)
	return interference.Side{
		Model: model, Batch: b, Size: p, SoloMS: ms, Batch1MS: b1, SerialMS: m.serialMS(b),
		Util: interference.Util{SM: u.SM, L2: u.L2, DRAM: u.DRAM},
	}, nil
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

// serialMS is u in L(b,p) = u + v/p fitted over the measured (not derived)
// sizes of batch b, NaN with fewer than two; Build computes it once per
// batch.
func (m *Model) serialMS(b int) float64 {
	if v, ok := m.serial[b]; ok {
		return v
	}
	return math.NaN()
}

// fitSerial fills m.serial from the profile's measured points.
func (m *Model) fitSerial() {
	sizes := map[int][]int{}
	lat := map[int][]float64{}
	for _, pt := range m.Profile.Points() {
		if !m.IsDerived(pt.Batch, pt.Size) {
			sizes[pt.Batch] = append(sizes[pt.Batch], pt.Size)
			lat[pt.Batch] = append(lat[pt.Batch], pt.P50MS)
		}
	}
	m.serial = map[int]float64{}
	for b, ss := range sizes {
		if len(ss) >= 2 {
			m.serial[b] = amdahlAt(ss, lat[b], math.MaxInt)
		}
	}
}
