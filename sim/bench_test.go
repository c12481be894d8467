package sim

import (
	"cmp"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/sim/workload"
	"github.com/stretchr/testify/require"
)

// benchWorkload is the speed benchmark's node: 8 whole A100s (refset
// symphony-a100, Symphony Table 4) and the 20 models of that zoo with the
// highest throughput at batch 32, 1,000 req/s each, Poisson, 60 s. Their
// SLOs are twice the table's, so that the planner's rule (2·ℓ(b) ≤ SLO)
// lets them batch: at the table's SLOs it places little of the load and
// most requests would be rejected without reaching a scheduler.
func benchWorkload(tb testing.TB) *workload.Workload {
	tb.Helper()
	set, err := refset.Load("symphony-a100")
	require.NoError(tb, err)
	ms := slices.Clone(set.Models)
	tput := func(m *refset.Model) float64 { return 32 / (m.Linear.AlphaMS*32 + m.Linear.BetaMS) }
	slices.SortStableFunc(ms, func(a, b *refset.Model) int { return cmp.Compare(tput(b), tput(a)) })
	w := &workload.Workload{
		Devices:  []workload.Device{{Profiles: "symphony-a100", Count: 8}},
		Duration: workload.Duration(60 * time.Second),
		Seed:     1,
	}
	for _, m := range ms[:20] {
		w.Models = append(w.Models, workload.Model{Name: m.Name, Rate: 1000, SLOMS: 2 * m.SLOMS})
	}
	require.NoError(tb, w.Validate())
	return w
}

// BenchmarkRun20x8 simulates 60 s of 20 models on 8 GPUs at 20,000 req/s
// (1.2 M requests) per iteration; the goal is under 10 s of wall time.
func BenchmarkRun20x8(b *testing.B) {
	w := benchWorkload(b)
	var res *Result
	for b.Loop() {
		var err error
		res, err = Run(context.Background(), w, Options{})
		require.NoError(b, err)
	}
	b.ReportMetric(float64(res.Requests), "requests/op")
	b.ReportMetric(res.Goodput, "goodput")
	b.ReportMetric(float64(res.Requests)*float64(b.N)/b.Elapsed().Seconds(), "requests/s")
}
