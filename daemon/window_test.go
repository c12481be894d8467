package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLatencyWindowSummarisesTheLastRequests(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		add  func(w *latencyWindow)
		want windowStats
	}{
		{name: "empty", add: func(*latencyWindow) {}, want: windowStats{}},
		{name: "late and failed requests are violations; failed ones have no latency or batch",
			add: func(w *latencyWindow) {
				w.add(2*ms, 4, false)
				w.add(4*ms, 8, false)
				w.add(12*ms, 8, true) // over its deadline
				w.add(-1, 0, false)   // failed
			},
			want: windowStats{Requests: 4, P50MS: 4, P99MS: 12, Attainment: 0.5, MeanBatch: 20.0 / 3, Violations: 2}},
		{name: "percentiles by nearest rank",
			add: func(w *latencyWindow) {
				for i := 1; i <= 100; i++ {
					w.add(time.Duration(i)*ms/10, 1, false) // 0.1 … 10 ms
				}
			},
			want: windowStats{Requests: 100, P50MS: 5, P99MS: 9.9, Attainment: 1, MeanBatch: 1}},
		{name: "only the last windowSize requests count",
			add: func(w *latencyWindow) {
				for range windowSize {
					w.add(-1, 0, false)
				}
				for range windowSize {
					w.add(ms, 2, false)
				}
			},
			want: windowStats{Requests: windowSize, P50MS: 1, P99MS: 1, Attainment: 1, MeanBatch: 2}},
		{name: "lateness is each request's own, not one threshold",
			add: func(w *latencyWindow) {
				w.add(30*ms, 1, false) // a pipeline step within its budget
				w.add(3*ms, 1, true)   // a step past a 2 ms budget
			},
			want: windowStats{Requests: 2, P50MS: 3, P99MS: 30, Attainment: 0.5, MeanBatch: 1, Violations: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w latencyWindow
			tt.add(&w)
			got := w.stats()
			require.Equal(t, tt.want.Requests, got.Requests)
			require.Equal(t, tt.want.Violations, got.Violations)
			require.InDelta(t, tt.want.P50MS, got.P50MS, 1e-9)
			require.InDelta(t, tt.want.P99MS, got.P99MS, 1e-9)
			require.InDelta(t, tt.want.Attainment, got.Attainment, 1e-9)
			require.InDelta(t, tt.want.MeanBatch, got.MeanBatch, 1e-9)
		})
	}
}
