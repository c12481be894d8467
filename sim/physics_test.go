package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMIGSizesOverOneHundredDoNotSlow: MIG instances whose rounded sizes
// sum past 100% (2g+2g+3g on an A100: 29+29+43) run at full speed side by
// side; only MPS gpu-lets asking for more than the GPU are slowed.
func TestMIGSizesOverOneHundredDoNotSlow(t *testing.T) {
	e := &engine{}
	g := &gpu{mig: true}
	for _, size := range []int{29, 29, 43} {
		g.lets = append(g.lets, &glet{size: size, busy: true, work: float64(10 * time.Millisecond), slow: 1})
	}
	e.coRun(g, 0)
	for _, l := range g.lets {
		require.InDelta(t, 1, l.slow, 0)
	}
}
