package daemon

import (
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
)

// Triton's latency summaries (metrics.triton_summaries, tritonserver's
// --metrics-config summary_latencies=true): per model and version, the
// quantiles of the last minute's requests of their end-to-end time, queue
// time and the three parts of their batch's time, in microseconds.

// The summaries' families, as Triton names them.
var (
	descNVRequestSummary = prometheus.NewDesc("nv_inference_request_summary_us", "End-to-end time of successful requests, microseconds: quantiles over the last minute (Triton's name).", tritonModelLabels, nil)
	descNVQueueSummary   = prometheus.NewDesc("nv_inference_queue_summary_us", "Time requests waited before their batch started, microseconds: quantiles over the last minute (Triton's name).", tritonModelLabels, nil)
	descNVInputSummary   = prometheus.NewDesc("nv_inference_compute_input_summary_us", "Time readying the inputs of the batches requests ran in, microseconds: quantiles over the last minute (Triton's name).", tritonModelLabels, nil)
	descNVInferSummary   = prometheus.NewDesc("nv_inference_compute_infer_summary_us", "Time of the model's runs in the batches requests ran in, microseconds: quantiles over the last minute (Triton's name).", tritonModelLabels, nil)
	descNVOutputSummary  = prometheus.NewDesc("nv_inference_compute_output_summary_us", "Time splitting the outputs of the batches requests ran in, microseconds: quantiles over the last minute (Triton's name).", tritonModelLabels, nil)
)

// summaryWindow is how far back the quantiles look, in summaryAgeBuckets
// steps: the defaults of Prometheus's C++ client.
const (
	summaryWindow     = time.Minute
	summaryAgeBuckets = 5
)

// Which of a model's summaries an observation goes to.
const (
	sumRequest = iota
	sumQueue
	sumInput
	sumInfer
	sumOutput
	summaryKinds
)

// summaryDescs are the families of the kinds, in their order.
var summaryDescs = [summaryKinds]*prometheus.Desc{descNVRequestSummary, descNVQueueSummary, descNVInputSummary, descNVInferSummary, descNVOutputSummary}

// tritonSummaries are the summaries of every model observed, for one set
// of quantiles.
type tritonSummaries struct {
	cfg        *config.Config // the configuration they are read for: its quantiles
	objectives map[float64]float64
	models     sync.Map // model name: *[summaryKinds]prometheus.Summary
}

// summaries returns the summaries to observe into under the configuration
// now, nil while they are off. A configuration with other quantiles starts
// them anew; one with the same keeps what they hold.
func (n *node) summaries() *tritonSummaries {
	cfg := n.conf()
	if cfg == nil || !cfg.Metrics.TritonNames || !cfg.Metrics.TritonSummaries {
		return nil
	}
	for {
		s := n.tritonSums.Load()
		if s != nil && s.cfg == cfg {
			return s
		}
		next := &tritonSummaries{cfg: cfg}
		if s != nil && slices.Equal(s.cfg.Metrics.TritonSummaryQuantiles, cfg.Metrics.TritonSummaryQuantiles) {
			next.objectives = s.objectives
			s.models.Range(func(k, v any) bool { next.models.Store(k, v); return true })
		} else {
			next.objectives, _ = config.SummaryObjectives(cfg.Metrics.TritonSummaryQuantiles) // validated with the configuration
		}
		if n.tritonSums.CompareAndSwap(s, next) {
			return next
		}
	}
}

// of returns model name's summaries, made at its first observation.
func (s *tritonSummaries) of(name string) *[summaryKinds]prometheus.Summary {
	if v, ok := s.models.Load(name); ok {
		return v.(*[summaryKinds]prometheus.Summary)
	}
	var made [summaryKinds]prometheus.Summary
	for k := range made {
		made[k] = prometheus.NewSummary(prometheus.SummaryOpts{Name: "s", Help: "s", Objectives: s.objectives, MaxAge: summaryWindow, AgeBuckets: summaryAgeBuckets})
	}
	v, _ := s.models.LoadOrStore(name, &made)
	return v.(*[summaryKinds]prometheus.Summary)
}

// observeSummary books d in model name's summary of kind, when the
// summaries are on.
func (n *node) observeSummary(name string, kind int, d time.Duration) {
	if s := n.summaries(); s != nil {
		s.of(name)[kind].Observe(microseconds(d))
	}
}

// observeExecutorSummaries books the times an executor gave of a request
// of m (r), when the summaries are on.
func (n *node) observeExecutorSummaries(m *repository.Model, r execReport) {
	sums := n.summaries()
	if sums == nil {
		return
	}
	of := sums.of(m.Name)
	of[sumQueue].Observe(microseconds(r.queue))
	of[sumInput].Observe(microseconds(r.input))
	of[sumInfer].Observe(microseconds(r.compute))
	of[sumOutput].Observe(microseconds(r.output))
}

// microseconds is d in microseconds, Triton's unit for latencies.
func microseconds(d time.Duration) float64 { return float64(d) / 1e3 }

// collect sends the summaries of the served models m (Triton's labels:
// their folder and version).
func (s *tritonSummaries) collect(ms []*repository.Model, ch chan<- prometheus.Metric) {
	for _, m := range ms {
		v, ok := s.models.Load(m.Name)
		if !ok {
			continue
		}
		labels := []string{m.Family, strconv.Itoa(max(m.Version, 1))}
		for k, sum := range v.(*[summaryKinds]prometheus.Summary) {
			var out dto.Metric
			if sum.Write(&out) != nil {
				continue
			}
			q := make(map[float64]float64, len(out.Summary.GetQuantile()))
			for _, x := range out.Summary.GetQuantile() {
				q[x.GetQuantile()] = x.GetValue()
			}
			ch <- prometheus.MustNewConstSummary(summaryDescs[k], out.Summary.GetSampleCount(), out.Summary.GetSampleSum(), q, labels...)
		}
	}
}
