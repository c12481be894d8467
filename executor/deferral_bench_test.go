package executor

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/internal/hrtimer"
)

// BenchmarkDeferredBatches offers a deferred gpu-let Poisson arrivals at
// 3 000 req/s for 4 s per iteration, on a model with ℓ(b) = 1 + 0.05·b ms
// and a 10 ms SLO, and reports the mean batch, the share answered in time,
// the latency at p50 and p99 and the timer slack the loop settled at: how
// much of the deferral window the loop's timer lateness costs
// (docs/BENCHMARKS.md, "Timers").
//
//	go test -run '^$' -bench DeferredBatches -benchtime 2x ./executor
func BenchmarkDeferredBatches(b *testing.B) {
	for b.Loop() {
		f := &fakeRuntime{base: time.Millisecond, perRow: 50 * time.Microsecond}
		srv, c := startServer(b, f, "deferred")
		loadDouble(b, c, "double", 10*time.Millisecond, 32)
		sent, ok, lat := offerPoisson(b, c, 3000, 4*time.Second)
		rows := 0
		batches := f.batchSizes()
		for _, n := range batches {
			rows += n
		}
		var slack time.Duration
		srv.loop.call(func() { slack = srv.loop.slack.get() })
		b.ReportMetric(float64(rows)/float64(len(batches)), "rows/batch")
		b.ReportMetric(100*float64(ok)/float64(sent), "%answered")
		b.ReportMetric(float64(slack.Microseconds()), "slack-µs")
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}

// offerPoisson sends one-row requests to "double" at rate for d, each from
// a goroutine of its own, and counts those sent and those answered OK,
// with the latencies of the latter.
func offerPoisson(tb testing.TB, c *Client, rate float64, d time.Duration) (sent, ok int, lat []time.Duration) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	timer := hrtimer.NewTimer()
	defer func() { _ = timer.Close() }()
	var wg sync.WaitGroup
	var mu sync.Mutex
	start := time.Now()
	for at := start; at.Sub(start) < d; at = at.Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second))) {
		timer.Reset(time.Until(at))
		<-timer.C
		sent++
		wg.Go(func() {
			begin := time.Now()
			r, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 1)}})
			if err == nil && r.Code == pb.Code_OK {
				mu.Lock()
				ok++
				lat = append(lat, time.Since(begin))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return sent, ok, lat
}
