package planbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/stretchr/testify/require"
)

// TestReport prints the numbers of docs/BENCHMARKS.md ("Planner") when
// GPULETD_PLANNER_REPORT is set: schedulability at the paper's rate step and
// at the step that puts SBP near half, max schedulable rates and planner
// times on iGniter with 4 GPUs. It asserts nothing beyond the runs
// succeeding; the floors are TestSchedulabilityFloor and TestMaxRateFloor.
func TestReport(t *testing.T) {
	if os.Getenv("GPULETD_PLANNER_REPORT") == "" {
		t.Skip("set GPULETD_PLANNER_REPORT=1 to print the planner report")
	}
	ctx := context.Background()
	n := igniterNode(t, 4)
	print := func(v any) {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		fmt.Println(string(b))
	}
	for _, step := range []float64{PaperRateStep, 300, 400, 450, 475, 500} {
		r, err := RunSchedulability(ctx, n, step)
		require.NoError(t, err)
		print(r)
	}
	m, err := RunMaxRate(ctx, n)
	require.NoError(t, err)
	print(m)
	var vsIdeal, vsSBP float64
	for _, name := range []string{MixEqual, MixLongOnly, MixShortSkew, MixGame, MixTraffic} {
		x := m.Mixes[name]
		a, i, s := x[gpulet.AlgoGpuletInt], x[gpulet.AlgoIdeal], x[gpulet.AlgoSBP]
		fmt.Printf("%-10s gpulet-int/ideal %.3f  gpulet-int/sbp %.3f  sbp/ideal %.3f  gpulet/ideal %.3f\n", name, a/i, a/s, s/i, x[gpulet.AlgoGpulet]/i)
		vsIdeal += a / i / 5
		vsSBP += a / s / 5
	}
	fmt.Printf("average    gpulet-int/ideal %.4f  gpulet-int/sbp %.4f\n", vsIdeal, vsSBP)
	pt, err := RunPlannerTime(ctx, n)
	require.NoError(t, err)
	print(pt)
}
