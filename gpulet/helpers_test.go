package gpulet

import (
	"context"
	"math"
	"testing"

	"github.com/gpulet/gpuletd/interference"
	"github.com/stretchr/testify/require"
)

// linearProfile has L(b,p) = beta + alpha·b·100/p ms at the given sizes for
// batches 1..maxB: a fixed part that more SMs do not shorten and a part that
// scales with the SM share, so smaller gpu-lets serve more per percent.
func linearProfile(t testing.TB, name, dev string, mem, alpha, beta float64, maxB int, sizes ...int) *Profile {
	t.Helper()
	if len(sizes) == 0 {
		sizes = DefaultMPSSizes
	}
	var pts []Point
	for _, s := range sizes {
		for b := 1; b <= maxB; b++ {
			pts = append(pts, Point{Batch: b, Size: s, P50MS: beta + alpha*float64(b)*100/float64(s),
				Util: Util{SM: 50, L2: 10 + float64(b), DRAM: 20 + float64(b)}})
		}
	}
	p, err := NewProfile(name, dev, mem, pts)
	require.NoError(t, err)
	return p
}

// sublinearProfile has L(b,p) = beta + alpha·b·√(100/p) ms at the default
// MPS sizes for batches 1..32: a gpu-let of p% is less than p/100 times as
// fast as the whole GPU, so small gpu-lets serve more per percent (as
// iGniter's V100 measurements do).
func sublinearProfile(t testing.TB, name, dev string, mem, alpha, beta float64) *Profile {
	t.Helper()
	var pts []Point
	for _, s := range DefaultMPSSizes {
		for b := 1; b <= 32; b++ {
			pts = append(pts, Point{Batch: b, Size: s, P50MS: beta + alpha*float64(b)*math.Sqrt(100/float64(s)),
				Util: Util{SM: 50, L2: 10 + float64(b), DRAM: 20 + float64(b)}})
		}
	}
	p, err := NewProfile(name, dev, mem, pts)
	require.NoError(t, err)
	return p
}

// wholeGPU is an unpartitioned GPU of type dev.
func wholeGPU(id, dev string, memMB float64) GPU {
	return GPU{ID: id, Type: dev, MemoryMB: memMB, Backend: BackendNone}
}

// mpsGPU is an MPS GPU of type dev with the default sizes.
func mpsGPU(id, dev string, memMB float64) GPU {
	return GPU{ID: id, Type: dev, MemoryMB: memMB, Backend: BackendMPS}
}

// constPredictor slows every model by the same factor.
type constPredictor float64

func (c constPredictor) Predict(interference.Sample) float64 { return float64(c) }

// pairPredictor slows Self by factor[Self.Model] (1 when absent).
type pairPredictor map[string]float64

func (p pairPredictor) Predict(s interference.Sample) float64 {
	if f, ok := p[s.Self.Model]; ok {
		return f
	}
	return 1
}

func runPlan(t testing.TB, algo Algo, in Input, opts Options) *Plan {
	t.Helper()
	p, err := Run(context.Background(), algo, in, opts)
	require.NoError(t, err)
	return p
}

// placements returns every placement of the named model in a plan.
func placements(p *Plan, name string) []Placement {
	var out []Placement
	for _, g := range p.GPUs {
		for _, l := range g.GPULets {
			for _, m := range l.Models {
				if m.Name == name {
					out = append(out, m)
				}
			}
		}
	}
	return out
}

// checkSelf asserts the invariants every plan keeps under its own
// predictions: worst case within the SLO, batches per cycle covering the
// rate, sizes within the GPU, and assigned + unscheduled = demanded.
func checkSelf(t testing.TB, in Input, p *Plan) {
	t.Helper()
	rates := map[string]float64{}
	for _, d := range in.Demands {
		if _, ok := rates[d.Name]; !ok && d.Rate > 0 {
			rates[d.Name] = d.Rate
		}
	}
	got := p.Assigned()
	for _, g := range p.GPUs {
		sum := 0
		for _, l := range g.GPULets {
			sum += l.Size
			require.LessOrEqual(t, l.Occupancy, 1+1e-9)
			for _, m := range l.Models {
				require.LessOrEqual(t, m.WorstMS, m.SLOMS*(1+1e-9), "%s on %s", m.Name, g.ID)
				require.GreaterOrEqual(t, 1000*float64(m.Batch)/l.DutyMS, m.Rate*(1-1e-9), "%s on %s", m.Name, g.ID)
				require.InDelta(t, m.SoloMS*m.Factor, m.LatencyMS, 1e-9)
			}
		}
		require.LessOrEqual(t, sum, 100, g.ID)
		require.LessOrEqual(t, g.MemoryUsedMB, g.MemoryMB+1e-9, g.ID)
	}
	for name, r := range rates {
		require.InDelta(t, r, got[name]+p.Unscheduled[name], 1e-6*r, name)
	}
	require.Equal(t, len(p.Unscheduled) == 0, p.Schedulable)
}
