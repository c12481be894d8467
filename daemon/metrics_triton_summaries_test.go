package daemon

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
)

// gatherSummaries collects the Triton collector's summaries of n by
// family.
func gatherSummaries(t *testing.T, n *node) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(collectFunc(func(ch chan<- prometheus.Metric) { collectTritonModels(n, ch) })))
	fams, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		if f.GetType() == dto.MetricType_SUMMARY {
			out[f.GetName()] = f
		}
	}
	return out
}

// Triton's latency summaries (--metrics-config summary_latencies=true):
// quantiles of each served model's requests, under its folder and version,
// off until asked for; new quantiles start them anew, a reload that keeps
// them keeps what they hold.
func TestTritonLatencySummaries(t *testing.T) {
	m := &repository.Model{Name: "m:2", Family: "m", Version: 2}
	n := &node{catalog: &catalog{models: map[string]*repository.Model{"m:2": m}, pipelines: map[string]*repository.Model{}}, router: newRouter()}
	cfg := config.Default()
	cfg.Metrics.TritonNames = true
	n.cfg.Store(&cfg)
	n.observeSummary("m:2", sumRequest, time.Millisecond)
	require.Empty(t, gatherSummaries(t, n), "off by default, as in Triton")
	require.Nil(t, n.tritonSums.Load(), "nothing kept while off")

	on := cfg
	on.Metrics.TritonSummaries, on.Metrics.TritonSummaryQuantiles = true, []string{"0.5:0.01", "0.99:0.001"}
	n.cfg.Store(&on)
	for i := 1; i <= 100; i++ {
		n.observeSummary("m:2", sumRequest, time.Duration(i)*time.Millisecond)
		n.observeSummary("gone", sumRequest, time.Millisecond) // no longer served: not exported
	}
	fams := gatherSummaries(t, n)
	require.Len(t, fams, summaryKinds, "a model observed has every family, as in Triton")
	req := fams["nv_inference_request_summary_us"]
	require.NotNil(t, req)
	require.Len(t, req.Metric, 1)
	got := req.Metric[0]
	require.Equal(t, map[string]string{"model": "m", "version": "2"}, labelMap(got.Label))
	require.Equal(t, uint64(100), got.Summary.GetSampleCount())
	require.InDelta(t, 5050e3, got.Summary.GetSampleSum(), 1, "microseconds")
	q := map[float64]float64{}
	for _, x := range got.Summary.Quantile {
		q[x.GetQuantile()] = x.GetValue()
	}
	require.InDelta(t, 50e3, q[0.5], 2e3)
	require.InDelta(t, 99e3, q[0.99], 1e3)

	// The executor's answer: its queue and the parts of its batch.
	n.observeExecutorSummaries(m, reportOf(&pb.InferResponse{QueueUs: 300, ComputeInputNs: 20_000, ComputeUs: 900, ComputeOutputNs: 5_000}))
	fams = gatherSummaries(t, n)
	for name, want := range map[string]float64{"nv_inference_queue_summary_us": 300, "nv_inference_compute_input_summary_us": 20,
		"nv_inference_compute_infer_summary_us": 900, "nv_inference_compute_output_summary_us": 5} {
		require.Contains(t, fams, name)
		require.InDelta(t, want, fams[name].Metric[0].Summary.GetSampleSum(), 1e-9, name)
	}

	// A reload that keeps the quantiles keeps the summaries; new ones start
	// them anew.
	same := on
	n.cfg.Store(&same)
	require.Equal(t, uint64(100), gatherSummaries(t, n)["nv_inference_request_summary_us"].Metric[0].Summary.GetSampleCount())
	other := on
	other.Metrics.TritonSummaryQuantiles = []string{"0.9:0.01"}
	n.cfg.Store(&other)
	require.Empty(t, gatherSummaries(t, n))
	n.observeSummary("m:2", sumRequest, time.Millisecond)
	require.Len(t, gatherSummaries(t, n)["nv_inference_request_summary_us"].Metric[0].Summary.Quantile, 1)
}

// labelMap is a metric's labels by name.
func labelMap(ls []*dto.LabelPair) map[string]string {
	out := map[string]string{}
	for _, l := range ls {
		out[l.GetName()] = l.GetValue()
	}
	return out
}
