package hrtimer

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkLateness arms a timer b.N times for each duration and waits for
// it, on the runtime's timer and on a Timer, and reports how late it fired
// (µs at p50 and p99). Run it on an otherwise idle host:
//
//	go test -run '^$' -bench Lateness -benchtime 300x ./internal/hrtimer
func BenchmarkLateness(b *testing.B) {
	for _, d := range []time.Duration{time.Microsecond, 300 * time.Microsecond, 2500 * time.Microsecond} {
		b.Run(fmt.Sprintf("runtime/%v", d), func(b *testing.B) {
			t := time.NewTimer(time.Hour)
			defer t.Stop()
			lateness(b, d, func() <-chan time.Time { t.Reset(d); return t.C })
		})
		b.Run(fmt.Sprintf("hrtimer/%v", d), func(b *testing.B) {
			t := NewTimer()
			defer func() { _ = t.Close() }()
			lateness(b, d, func() <-chan time.Time { t.Reset(d); return t.C })
		})
	}
}

// lateness times b.N firings of arm, each due after d.
func lateness(b *testing.B, d time.Duration, arm func() <-chan time.Time) {
	late := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		<-arm()
		late = append(late, time.Since(start)-d)
	}
	slices.Sort(late)
	q := func(f float64) float64 { return float64(late[int(f*float64(len(late)-1))]) / 1e3 }
	b.ReportMetric(q(0.5), "late-p50-µs")
	b.ReportMetric(q(0.99), "late-p99-µs")
}
