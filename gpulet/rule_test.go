package gpulet

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRules plans one model whose batch latency is 10 + 2·b ms under a
// 42 ms SLO on one whole GPU. The serving rule takes batches up to 5
// (2·20 ≤ 42: 250 req/s); ParvaGPU's takes those below 0.45·42 = 18.9 ms,
// batch 4 (222 req/s). Batches from 3 up run as 2 processes.
func TestRules(t *testing.T) {
	var pts []Point
	for b := 1; b <= 8; b++ {
		pr := 1
		if b >= 3 {
			pr = 2
		}
		pts = append(pts, Point{Batch: b, Size: 100, P50MS: 10 + 2*float64(b), Util: UnknownUtil(), Procs: pr})
	}
	prof, err := NewProfile("m", "dev", 100, pts)
	require.NoError(t, err)
	in := func(rate float64) Input {
		return Input{GPUs: []GPU{{ID: "g", Type: "dev", MemoryMB: 1000, Backend: BackendNone}},
			Demands: []Demand{{Name: "m", Profile: prof, SLOMS: 42, Rate: rate}}}
	}
	tests := []struct {
		rule  Rule
		rate  float64
		ok    bool
		batch int
	}{
		{RuleServing, 240, true, 5},
		{"", 240, true, 5},
		{RuleParvaGPU, 240, false, 0},
		{RuleParvaGPU, 200, true, 4},
	}
	for _, tc := range tests {
		p, err := Run(context.Background(), AlgoGpulet, in(tc.rate), Options{Rule: tc.rule})
		require.NoError(t, err)
		require.Equal(t, tc.ok, p.Schedulable, "%s at %v", tc.rule, tc.rate)
		if !tc.ok {
			continue
		}
		pl := p.GPUs[0].GPULets[0].Models[0]
		require.Equal(t, tc.batch, pl.Batch, "%s", tc.rule)
		require.Equal(t, 2, pl.Procs)
		if tc.rule == RuleParvaGPU {
			require.Less(t, pl.LatencyMS, 0.45*42)
			require.LessOrEqual(t, p.GPUs[0].GPULets[0].DutyMS, 0.45*42+1e-9)
		} else {
			require.LessOrEqual(t, pl.WorstMS, 42.0)
		}
	}
	_, err = Run(context.Background(), AlgoGpulet, in(1), Options{Rule: "fast"})
	require.ErrorIs(t, err, ErrBadInput)
	// A model no batch of which meets ParvaGPU's bound says so.
	p, err := Run(context.Background(), AlgoGpulet, Input{GPUs: in(1).GPUs,
		Demands: []Demand{{Name: "m", Profile: prof, SLOMS: 26, Rate: 1}}}, Options{Rule: RuleParvaGPU})
	require.NoError(t, err)
	require.Contains(t, p.Reasons["m"], "L(1,p) < 0.45·SLO")
}
