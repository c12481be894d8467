package sched

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time the calling OS thread has used.
func threadCPU(tb testing.TB) time.Duration {
	var ru unix.Rusage
	require.NoError(tb, unix.Getrusage(unix.RUSAGE_THREAD, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runBench runs one benchmark simulation of b.N requests and reports req/s
// (wall clock) and req/cpu-s (CPU time of the goroutine's thread, which a
// busy machine does not distort).
func runBench(b *testing.B, cfg BenchConfig) {
	cfg.Requests = b.N
	sim, src, _, err := NewBenchSim(cfg)
	require.NoError(b, err)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := threadCPU(b)
	st, err := sim.Run(src)
	cpu := threadCPU(b) - cpu0
	b.StopTimer()
	require.NoError(b, err)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	if cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "req/cpu-s")
	}
	b.ReportMetric(st.MeanBatch(), "batch")
	b.ReportMetric(float64(st.Rejections())/float64(st.Requests), "rejected/req")
}

// BenchmarkCore measures the scheduling core in virtual time: one gpu-let,
// Poisson arrivals over M models just under capacity, the driver loop and
// the arrival generator included, on one goroutine. Metric req/s is requests
// per second per core.
func BenchmarkCore(b *testing.B) {
	for _, m := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("models=%d", m), func(b *testing.B) {
			runBench(b, BenchConfig{Models: m, Seed: 1})
		})
	}
}

// BenchmarkPolicies compares the policies (deferred also as Symphony published
// it, deferred:solo,headonly) on one gpu-let with 1 and 10
// models, at 30% and 90% of the estimated capacity: speed, and the schedule's
// mean batch and rejected fraction (deterministic for a fixed -benchtime=Nx).
func BenchmarkPolicies(b *testing.B) {
	for _, m := range []int{1, 10} {
		for _, load := range []float64{0.3, 0.9} {
			for _, p := range []Policy{Deferred{}, Deferred{Solo: true, HeadOnly: true}, Eager{}, Timeout{K: ms(2)}, Flex{}, Flex{Preempt: true}} {
				b.Run(fmt.Sprintf("models=%d/load=%.1f/%s", m, load, p), func(b *testing.B) {
					runBench(b, BenchConfig{Models: m, Seed: 1, Policy: p, Load: load})
				})
			}
		}
	}
}

// BenchmarkRoute measures one routing decision over 4 gpu-lets.
func BenchmarkRoute(b *testing.B) {
	l, err := LinearLatency(benchAlpha, benchBeta, benchMaxBatch)
	require.NoError(b, err)
	ts := make([]Target, 4)
	for i := range ts {
		ts[i].Latency = l
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		now := ms(float64(i) * 0.1)
		for j := range ts { // as if freshly published
			ts[j].RouteState = RouteState{FreeAt: now + ms(float64(j)), Latency: l}
		}
		if _, _, err := Route(now, now+ms(50), ts); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBenchCore(t *testing.T) {
	for _, m := range []int{1, 10, 100} {
		res, err := BenchCore(m, 20000, 1)
		require.NoError(t, err)
		require.Equal(t, uint64(20000), res.Requests)
		require.Equal(t, "deferred", res.Policy)
		require.Positive(t, res.RequestsPerSecondPerCore)
		require.Positive(t, res.OfferedRate)
		require.Equal(t, res.Requests, res.Completed+res.Rejected)
		t.Logf("models=%d rate=%.0f/s mean batch %.2f rejected %.3f", m, res.OfferedRate, res.MeanBatch, float64(res.Rejected)/float64(res.Requests))
		// Just under capacity: at the capacity (rate/0.95) eager loses at most
		// 1%, at twice the capacity more.
		c := res.OfferedRate / DefaultBenchLoad
		for _, tc := range []struct {
			rate float64
			over bool
		}{{c, false}, {2 * c, true}} {
			sim, src, err := benchWorkload(m, capacityRuns, 1, Eager{}, tc.rate)
			require.NoError(t, err)
			st, err := sim.Run(src)
			require.NoError(t, err)
			require.Equal(t, tc.over, float64(st.Rejections()) > capacityLoss*float64(st.Requests), "rate %v", tc.rate)
		}
	}
	_, err := BenchCore(0, 10, 1)
	require.ErrorIs(t, err, ErrBadConfig)
	_, err = BenchCore(1, 0, 1)
	require.ErrorIs(t, err, ErrBadConfig)
}

// TestEstimateCapacity checks the estimate against a case worked by hand:
// one model, SLO 25 ms, ℓ(b) = b + 5 ms. The budget rule caps the batch at
// 7 (2·ℓ(7) = 24 ≤ 25 < 2·ℓ(8)); at rate r ≥ 7/(25 − 12) ms⁻¹ ≈ 538/s the
// batch is 7 and the gpu-let is saturated at r·ℓ(7)/7 = 1: r = 7/12 ms⁻¹.
func TestEstimateCapacity(t *testing.T) {
	l := linear(t, 1, 5, 64)
	require.InDelta(t, 7/0.012, estimateCapacity(l, []time.Duration{ms(25)}), 1e-6)
	require.Zero(t, estimateCapacity(l, nil))
}
