package sim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/sim/workload"
	"github.com/stretchr/testify/require"
)

// parvaScenarios writes ParvaGPU's first two scenarios (its SLO/ files,
// rows 1 and 2; the latency file ends without a newline, as ParvaGPU's does).
func parvaScenarios(t *testing.T, latency, rate string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "SLO_latency.csv"), []byte(latency), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "SLO_req_rate.csv"), []byte(rate), 0o644))
	return dir
}

const (
	parvaLatency = "6434,183,N/A,N/A,418.5,167,N/A,N/A,204.5,N/A,396.5\n6434,183,216.5,168.5,418.5,167,211.5,212.5,204.5,399.5,396.5"
	parvaRate    = "19,353,N/A,N/A,460,677,N/A,N/A,829,N/A,354\n19,353,308,276,460,677,393,281,829,410,354\n"
)

func TestLoadParvaScenarios(t *testing.T) {
	set, err := refset.Load(refset.SetParvaGPUA100)
	require.NoError(t, err)
	scs, err := LoadParvaScenarios(parvaScenarios(t, parvaLatency, parvaRate), set.ModelNames())
	require.NoError(t, err)
	require.Len(t, scs, 2)
	require.Len(t, scs[0].Models, 6)
	require.Len(t, scs[1].Models, 11)
	require.Equal(t, ParvaDemand{Name: "bert", SLOMS: 6434, Rate: 19}, scs[0].Models[0])
	require.Equal(t, ParvaDemand{Name: "vgg19", SLOMS: 396.5, Rate: 354}, scs[1].Models[10])

	bad := []struct{ name, latency, rate, want string }{
		{"N/A on one side", parvaLatency, strings.Replace(parvaRate, "19,353,N/A", "19,353,5", 1), "with rate"},
		{"rows differ", parvaLatency, "19,353,N/A,N/A,460,677,N/A,N/A,829,N/A,354\n", "latency rows"},
		{"columns", parvaLatency, "19,353\n1,2\n", "wrong number of fields"},
		{"not a number", parvaLatency, strings.Replace(parvaRate, "829", "fast", 1), "want positive numbers"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadParvaScenarios(parvaScenarios(t, tc.latency, tc.rate), set.ModelNames())
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestGPUsNeededBeatsParvaGPU plans ParvaGPU's six scenarios under
// ParvaGPU's own rule: no more A100s than its scheduler deploys on any of
// them and fewer in all, each plan serving its rates with under 1% of
// requests late or lost in simulation, every MIG layout one the A100 can
// make.
func TestGPUsNeededBeatsParvaGPU(t *testing.T) {
	set, err := refset.Load(refset.SetParvaGPUA100)
	require.NoError(t, err)
	scs, err := LoadParvaScenarios(filepath.Join("testdata", "parvagpu-slo"), set.ModelNames())
	require.NoError(t, err)
	require.Len(t, scs, len(ParvaGPUGPUs))
	res, err := RunGPUsNeeded(context.Background(), set.Name, scs, "parvagpu", "gpulet", 1, 2)
	require.NoError(t, err)
	require.Len(t, res.Rows, len(ParvaGPUGPUs))
	ours, theirs := 0, 0
	for _, row := range res.Rows {
		require.Positive(t, row.GPUs)
		require.LessOrEqual(t, row.GPUs, row.ParvaGPU, "scenario %d", row.Index)
		require.Less(t, row.ViolationFraction, 0.01, "scenario %d", row.Index)
		require.True(t, row.Plan.Schedulable)
		require.Empty(t, row.Plan.Unscheduled)
		for _, g := range row.Plan.GPUs {
			for _, l := range g.GPULets {
				require.NotEmpty(t, l.MIGProfile, "every gpu-let is a MIG instance")
			}
		}
		ours += row.GPUs
		theirs += row.ParvaGPU
	}
	require.Less(t, ours, theirs)
	var b strings.Builder
	require.NoError(t, res.WriteTable(&b))
	require.Contains(t, b.String(), "| 1 | 6 | 1 | 2 |")
}

// BenchmarkPlanLargestParvaScenario plans ParvaGPU's largest scenario (6,
// 11 models) on the 16 A100s it needs, from the workload as the bench
// builds it (set loading included).
func BenchmarkPlanLargestParvaScenario(b *testing.B) {
	set, err := refset.Load(refset.SetParvaGPUA100)
	require.NoError(b, err)
	scs, err := LoadParvaScenarios(filepath.Join("testdata", "parvagpu-slo"), set.ModelNames())
	require.NoError(b, err)
	w := gpusWorkload(set.Name, scs[5], 16, "parvagpu", "gpulet", 1)
	for b.Loop() {
		p, err := workload.Plan(context.Background(), w, "")
		require.NoError(b, err)
		require.True(b, p.Schedulable)
	}
}
