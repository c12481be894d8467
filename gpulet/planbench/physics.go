package planbench

import (
	"github.com/gpulet/gpuletd/gpulet/verify"
	"github.com/gpulet/gpuletd/profiler/refset"
)

// Physics adapts a reference set's emulated physics (measured co-location
// latencies where the set has them, its interference model elsewhere) to
// the verifier.
type Physics struct{ PH *refset.Physics }

var _ verify.Physics = Physics{}

// Solo implements verify.Physics.
func (p Physics) Solo(pl verify.Placement) (float64, error) {
	return p.PH.Solo(refset.Placement(pl))
}

// CoLocated implements verify.Physics.
func (p Physics) CoLocated(a, b verify.Placement) (float64, float64, error) {
	c, err := p.PH.CoLocated(refset.Placement(a), refset.Placement(b))
	if err != nil {
		return 0, 0, err
	}
	return c.LatencyMS[0], c.LatencyMS[1], nil
}
