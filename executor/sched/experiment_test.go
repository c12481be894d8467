package sched

import (
	"fmt"
	"testing"
)

// expRequests is the length of one experiment run.
const expRequests = 200000

// expCapacity caches the capacity of the experiment workloads by name.
var expCapacity = map[string]float64{}

func (w expWorkload) cachedCapacity(tb testing.TB) float64 {
	tb.Helper()
	if c, ok := expCapacity[w.name]; ok {
		return c
	}
	c := w.capacity(tb, Eager{}, 1)
	expCapacity[w.name] = c
	return c
}

// mergedA100 are five light A100 models (Symphony Table 4, SLO 20 ms) with
// their batches capped by the planner's duty-cycle rule: what a MERGEd
// gpu-let holds.
func mergedA100(tb testing.TB) []expModel {
	return dutyCycle(tb, a100Models(tb, "MobileNet", "VGG16", "MobileNetV2", "VGG19", "Xception"))
}

// runExperiment runs one cell of an experiment table per benchmark
// iteration and reports the schedule's quality (deterministic for a seed):
// goodput (requests finished within their deadline per second of offered
// time), the rejected fraction, the mean batch and the gpu-lets' busy
// fraction. The offered rate is load × the workload's capacity.
func runExperiment(b *testing.B, w expWorkload, p Policy, load float64) {
	c := w.cachedCapacity(b)
	var res expResult
	for b.Loop() {
		res = w.run(b, p, load*c, expRequests, 1, nil)
	}
	b.ReportMetric(res.goodput(), "goodput/s")
	b.ReportMetric(res.rejected(), "rejected/req")
	b.ReportMetric(res.MeanBatch(), "batch")
	b.ReportMetric(res.busy.Seconds()/float64(max(w.gpulets, 1))/res.End.Seconds(), "busy")
	b.ReportMetric(c, "capacity/s")
}

// BenchmarkShared: several models on ONE gpu-let at loads up to 0.9 of the
// capacity: Symphony's rule as published against the shared-gpu-let rule
// and its measured alternatives.
//
//	go test -run '^$' -bench Shared -benchtime=1x ./executor/sched/
func BenchmarkShared(b *testing.B) {
	workloads := []expWorkload{
		{name: "synth10", models: synthModels(b, 10), gpulets: 1},
		{name: "merged5", models: mergedA100(b), gpulets: 1},
	}
	for _, w := range workloads {
		for _, load := range []float64{0.1, 0.3, 0.5, 0.7, 0.9} {
			for _, p := range []Policy{Eager{}, published, blockGuard, chainGuard, sharedOnly, Deferred{}} {
				b.Run(fmt.Sprintf("w=%s/load=%.1f/%s", w.name, load, p), func(b *testing.B) {
					runExperiment(b, w, p, load)
				})
			}
		}
	}
}

// BenchmarkSharedCapacity: the largest rate each policy carries on the
// shared gpu-lets of BenchmarkShared with at most 1% of the requests lost
// (bisection over 20000-request runs, seed 1), and its mean batch there.
//
//	go test -run '^$' -bench SharedCapacity -benchtime=1x ./executor/sched/
func BenchmarkSharedCapacity(b *testing.B) {
	workloads := []expWorkload{
		{name: "synth10", models: synthModels(b, 10), gpulets: 1},
		{name: "merged5", models: mergedA100(b), gpulets: 1},
	}
	for _, w := range workloads {
		for _, p := range []Policy{Eager{}, published, blockGuard, chainGuard, sharedOnly, Deferred{}} {
			b.Run(fmt.Sprintf("w=%s/%s", w.name, p), func(b *testing.B) {
				var c float64
				var res expResult
				for b.Loop() {
					c = w.capacity(b, p, 1)
					res = w.run(b, p, c, expRequests, 1, nil)
				}
				b.ReportMetric(c, "capacity/s")
				b.ReportMetric(res.MeanBatch(), "batch")
			})
		}
	}
}

// BenchmarkOverload: goodput from 0.2 to 2 times the capacity, on one
// gpu-let with one model and with several, and on four gpu-lets behind the
// router: serving from the head of the queue against head dropping.
//
//	go test -run '^$' -bench Overload -benchtime=1x ./executor/sched/
func BenchmarkOverload(b *testing.B) {
	workloads := []expWorkload{
		{name: "synth1", models: synthModels(b, 1), gpulets: 1},
		{name: "resnet50", models: a100Models(b, "ResNet50"), gpulets: 1},
		{name: "resnet50x4", models: a100Models(b, "ResNet50"), gpulets: 4},
		{name: "synth10", models: synthModels(b, 10), gpulets: 1},
		{name: "merged5", models: mergedA100(b), gpulets: 1},
	}
	for _, w := range workloads {
		for _, load := range []float64{0.2, 0.5, 0.8, 1.0, 1.2, 1.5, 2.0} {
			for _, p := range []Policy{Eager{}, published, sharedOnly, ratioDrop, Deferred{}} {
				b.Run(fmt.Sprintf("w=%s/load=%.1f/%s", w.name, load, p), func(b *testing.B) {
					runExperiment(b, w, p, load)
				})
			}
		}
	}
}
