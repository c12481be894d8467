package store

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// profilePoints returns a full profile of one model: 6 sizes × 32 batches.
func profilePoints(sha, dev string) []LatencyPoint {
	var pts []LatencyPoint
	for _, p := range []int{20, 40, 50, 60, 80, 100} {
		for b := 1; b <= 32; b++ {
			pts = append(pts, LatencyPoint{ModelSHA: sha, DeviceType: dev, Size: p, Batch: b,
				P50MS: float64(b) * 100 / float64(p), P99MS: float64(b) * 120 / float64(p), MeanMS: math.NaN(), Samples: 200, Complete: true})
		}
	}
	return pts
}

// BenchmarkPutLatency stores a full 192-point profile per iteration, in one
// transaction.
func BenchmarkPutLatency(b *testing.B) {
	ctx := context.Background()
	s := openTest(b)
	pts := profilePoints(shaOf("m"), "cpu")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for j := range pts {
			pts[j].ModelSHA = fmt.Sprintf("m%d", i)
		}
		if err := s.PutLatency(ctx, pts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(pts)*b.N)/b.Elapsed().Seconds(), "points/s")
}

// BenchmarkLatency reads a full 192-point profile per iteration.
func BenchmarkLatency(b *testing.B) {
	ctx := context.Background()
	s := openTest(b)
	sha := shaOf("m")
	if err := s.PutLatency(ctx, profilePoints(sha, "cpu")); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Latency(ctx, sha, "cpu"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLatencyParallel reads profiles from every core at once.
func BenchmarkLatencyParallel(b *testing.B) {
	ctx := context.Background()
	s := openTest(b)
	sha := shaOf("m")
	if err := s.PutLatency(ctx, profilePoints(sha, "cpu")); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Latency(ctx, sha, "cpu"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAppendEvent appends one event per iteration (one commit each).
func BenchmarkAppendEvent(b *testing.B) {
	ctx := context.Background()
	s := openTest(b)
	e := Event{Kind: EventReorganize, Message: "applied plan", Attrs: map[string]string{"plan": "17"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.AppendEvent(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEventsSince reads a page of 100 events after an id, as a live
// feed does, from a history of 10,000.
func BenchmarkEventsSince(b *testing.B) {
	ctx := context.Background()
	s := openTest(b)
	for i := range 10000 {
		if _, err := s.AppendEvent(ctx, Event{Kind: EventProfileJob, Message: fmt.Sprint(i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		evs, err := s.Events(ctx, 9000, 100)
		if err != nil || len(evs) != 100 {
			b.Fatal(len(evs), err)
		}
	}
}

// BenchmarkSnapshot copies a database of a node with 20 models profiled
// on two device types and 50 000 events (a busy month) per iteration, as
// GET /api/v1/backup does.
func BenchmarkSnapshot(b *testing.B) {
	ctx := context.Background()
	s := openTest(b)
	for m := range 20 {
		for _, dev := range []string{"nvidia-h100", "cpu"} {
			if err := s.PutLatency(ctx, profilePoints(shaOf(fmt.Sprint("m", m)), dev)); err != nil {
				b.Fatal(err)
			}
		}
	}
	for i := range 50_000 {
		if _, err := s.AppendEvent(ctx, Event{Kind: EventReorganize, Message: fmt.Sprintf("re-planned: rate change %d", i),
			Attrs: map[string]string{"reason": "rate change"}}); err != nil {
			b.Fatal(err)
		}
	}
	var size int
	b.ReportAllocs()
	for b.Loop() {
		data, err := s.Snapshot(ctx)
		if err != nil {
			b.Fatal(err)
		}
		size = len(data)
	}
	b.ReportMetric(float64(size)/(1<<20), "MiB")
	b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/(1<<20), "MiB/s")
}
