package gpulet

import (
	"fmt"
	"math"

	"github.com/gpulet/gpuletd/interference"
)

// InterferenceSide describes a model running batches of b on a gpu-let of the
// given size as the interference model sees it: its solo latency at (b,p),
// the latency of a batch of one at the same size, the serial part of the
// batch (SerialMS) and its solo utilisation, all from the profile
// (interpolated as Latency does). The planner and the reference sets both
// describe co-locations with it, so a fitted model sees the same features
// when it is trained as when it is asked.
func InterferenceSide(p *Profile, b, size int) (interference.Side, error) {
	if p == nil {
		return interference.Side{}, fmt.Errorf("describe side b=%d p=%d: %w: nil profile", b, size, ErrNoProfile)
	}
	ms, ok := p.Latency(b, size)
	if !ok {
		return interference.Side{}, fmt.Errorf("describe %s b=%d p=%d on %s: %w", p.Model, b, size, p.DeviceType, ErrNoProfile)
	}
	b1, ok := p.Latency(1, size)
	if !ok {
		b1 = math.NaN()
	}
	// Utilisation answers UnknownUtil (all NaN) where the profile has none.
	u, _ := p.Utilisation(b, size)
	return interference.Side{
		Model: p.Model, Batch: b, Size: size, SoloMS: ms, Batch1MS: b1, SerialMS: p.SerialMS(b),
		Util: interference.Util{SM: u.SM, L2: u.L2, DRAM: u.DRAM},
	}, nil
}
