package sched

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The experiments of the shared-gpu-let guard and of head dropping: workloads,
// a runner that measures goodput, and the capacity every load is relative to.

// specPolicy is a policy given by its flattened spec, to reach the variants
// the experiments compare (Symphony's rule alone, the measured alternatives).
type specPolicy struct {
	name string
	s    policySpec
}

func (p specPolicy) String() string   { return p.name }
func (p specPolicy) spec() policySpec { return p.s }

// The deferred variants the experiments compare.
var (
	// published is Symphony's Algorithm 1 as published: every batch waits
	// for its frontrun, GETBATCH from the head (the scheduler before the
	// shared-gpu-let rule, head dropping and the gain rules).
	published Policy = Deferred{Solo: true, HeadOnly: true, Always: true}
	// sharedOnly is the shared-gpu-let rule alone.
	sharedOnly Policy = Deferred{HeadOnly: true}
	// blockGuard and chainGuard are the measured alternatives to the
	// shared-gpu-let rule (guard_alt.go), head only.
	blockGuard = specPolicy{"deferred:block", policySpec{kind: kindDeferred, guard: guardBlock}}
	chainGuard = specPolicy{"deferred:chain", policySpec{kind: kindDeferred, guard: guardChain}}
	// ratioDrop drops heads whenever a window beats the head's batch, without
	// the plan test (dropRatio).
	ratioDrop = specPolicy{"deferred:ratio", policySpec{kind: kindDeferred, guard: guardBusy, drop: dropRatio}}
)

// expModel is one model of an experiment workload.
type expModel struct {
	name        string
	alpha, beta time.Duration // ℓ(b) = α·b + β
	lat         Latency
	slo         time.Duration
}

// expWorkload is every model on each of gpulets gpu-lets (a router in front
// when there are several), Poisson arrivals with equal rates per model.
type expWorkload struct {
	name    string
	models  []expModel
	gpulets int
}

// synthModels are the benchmark's models (bench.go): ℓ(b) = b + 5 ms up to
// 64, SLOs spread over 25–100 ms.
func synthModels(tb testing.TB, n int) []expModel {
	tb.Helper()
	lat, slos, err := benchModels(n)
	require.NoError(tb, err)
	out := make([]expModel, n)
	for i := range out {
		out[i] = expModel{name: "synth" + strconv.Itoa(i), alpha: benchAlpha, beta: benchBeta, lat: lat, slo: slos[i]}
	}
	return out
}

// a100Models reads testdata/symphony-a100.csv (Symphony Table 4, A100:
// α, β, SLO). The largest batch is the budget rule's, 2·ℓ(b) ≤ SLO
// (DESIGN §4), at least 1.
func a100Models(tb testing.TB, names ...string) []expModel {
	tb.Helper()
	f, err := os.Open("testdata/symphony-a100.csv")
	require.NoError(tb, err)
	defer f.Close()
	byName := map[string]expModel{}
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "model,") || line == "" {
			continue
		}
		fs := strings.Split(line, ",")
		require.Len(tb, fs, 4, line)
		var v [3]float64
		for i := range v {
			v[i], err = strconv.ParseFloat(fs[i+1], 64)
			require.NoError(tb, err, line)
		}
		alpha, beta, slo := ms(v[0]), ms(v[1]), ms(v[2])
		maxB := 1
		for b := 2; 2*(alpha*time.Duration(b)+beta) <= slo; b++ {
			maxB = b
		}
		lat, err := LinearLatency(alpha, beta, maxB)
		require.NoError(tb, err)
		byName[fs[0]] = expModel{name: fs[0], alpha: alpha, beta: beta, lat: lat, slo: slo}
		order = append(order, fs[0])
	}
	require.NoError(tb, sc.Err())
	if len(names) == 0 {
		names = order
	}
	out := make([]expModel, len(names))
	for i, n := range names {
		m, ok := byName[n]
		require.True(tb, ok, "model %s not in testdata", n)
		out[i] = m
	}
	return out
}

// dutyCycle caps every model's batch as gpuletd's planner does when it
// MERGEs models onto one gpu-let by temporal sharing (DESIGN §4: the duty
// cycle, the sum of the co-resident models' batch latencies, must fit every
// model's budget): D + ℓ_m(b_m) ≤ SLO_m for every m, D = Σ ℓ_m(b_m). Batches
// start at 1 and grow one at a time, round-robin, while that holds.
func dutyCycle(tb testing.TB, models []expModel) []expModel {
	tb.Helper()
	bs := make([]int, len(models))
	for i := range bs {
		bs[i] = 1
	}
	l := func(i int) time.Duration { return models[i].alpha*time.Duration(bs[i]) + models[i].beta }
	fits := func() bool {
		var d time.Duration
		for i := range models {
			d += l(i)
		}
		for i, m := range models {
			if d+l(i) > m.slo {
				return false
			}
		}
		return true
	}
	require.True(tb, fits(), "the models do not fit one gpu-let even at batch 1")
	for grown := true; grown; {
		grown = false
		for i := range bs {
			bs[i]++
			if fits() {
				grown = true
			} else {
				bs[i]--
			}
		}
	}
	out := make([]expModel, len(models))
	for i, m := range models {
		lat, err := LinearLatency(m.alpha, m.beta, bs[i])
		require.NoError(tb, err)
		m.lat = lat
		out[i] = m
	}
	return out
}

// expResult is what one run measured.
type expResult struct {
	SimStats
	// span is the last arrival: goodput is counted over the offered period.
	span time.Duration
	busy time.Duration // summed over the gpu-lets
}

// goodput is requests finished within their deadline per second.
func (r expResult) goodput() float64 {
	if r.span <= 0 {
		return 0
	}
	return float64(r.Completed-r.Late) / r.span.Seconds()
}

func (r expResult) rejected() float64 {
	return float64(r.Rejections()) / float64(max(r.Requests, 1))
}

// spanSource remembers the last arrival it yielded.
type spanSource struct {
	Source
	last time.Duration
}

func (s *spanSource) Next() (Request, bool) {
	r, ok := s.Source.Next()
	if ok {
		s.last = r.Arrival
	}
	return r, ok
}

// run simulates count requests at the total rate (requests per second).
func (w expWorkload) run(tb testing.TB, p Policy, rate float64, count uint64, seed uint64, obs Observer) expResult {
	tb.Helper()
	specs := make([]ModelSpec, len(w.models))
	streams := make([]Stream, len(w.models))
	for i, m := range w.models {
		specs[i] = ModelSpec{ID: ModelID(i), ModelConfig: ModelConfig{Latency: m.lat}}
		streams[i] = Stream{Model: ModelID(i), Rate: rate / float64(len(w.models)), SLO: m.slo}
	}
	execs := make([]ExecutorSpec, max(w.gpulets, 1))
	for i := range execs {
		execs[i] = ExecutorSpec{Config: Config{Policy: p}, Models: specs}
	}
	ps, err := NewPoissonSource(streams, count, seed)
	require.NoError(tb, err)
	src := &spanSource{Source: ps}
	sim, err := NewSim(execs, obs)
	require.NoError(tb, err)
	st, err := sim.Run(src)
	require.NoError(tb, err)
	res := expResult{SimStats: st, span: src.last}
	for i := range execs {
		res.busy += sim.BusyTime(i)
	}
	return res
}

// capacity is the largest total rate at which policy p loses at most 1% of
// the requests (as BenchCapacity, over 20000-request runs); with Eager it is
// the capacity the experiments' loads are relative to.
func (w expWorkload) capacity(tb testing.TB, p Policy, seed uint64) float64 {
	tb.Helper()
	c, err := bisectCapacity(1000, func(rate float64) (bool, error) {
		st := w.run(tb, p, rate, capacityRuns, seed, nil)
		return float64(st.Rejections()) > capacityLoss*float64(st.Requests), nil
	})
	require.NoError(tb, err)
	return c
}
