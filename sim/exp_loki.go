package sim

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/sim/arrival"
	"github.com/gpulet/gpuletd/sim/workload"
)

// The loki experiment (Loki §6, Figure 5): Loki's traffic-analysis pipeline
// (YOLOv5 n…x detector, then an EfficientNet b0…b6 classifier for every car
// it finds; SLO 250 ms) on a node of whole GTX 1080 Ti GPUs with Loki's own
// batch times (refset loki-1080ti), its demand following the Azure
// conversation trace, under three ways of following the demand:
//
//   - gpuletd: hardware scaling, then accuracy scaling over the whole
//     pipeline (pipeline.PlanFor) down to the operator's accuracy floor,
//     per-task deadlines with early dropping and rerouting;
//   - pipeline_unaware: each task scaled on its own measured load
//     (pipeline.PerTask), as a system serving the tasks as separate models
//     would (it knows no end-to-end accuracy, so no floor);
//   - hardware_only: full accuracy on as many GPUs as it takes, and what
//     they cannot carry is dropped.
//
// The trace is replayed whole, its gaps scaled so that its busiest 30th
// (two minutes of the real hour, LokiPeakBins) runs at the demand asked
// for: the demand rises to that peak and falls back as the trace does. The
// busy period is the 30ths whose demand is at least LokiBusyShare of the
// peak's. A system's capacity is the largest such peak demand at which
// fewer than 1% of the requests violate the SLO end to end, both over the
// busy period and over the whole trace (bisection); the peak comparison
// runs every system at gpuletd's capacity and counts the violations of the
// requests that arrive in the busy period.

// LokiSystem is one way of following the demand.
type LokiSystem struct {
	Name    string
	Scaling control.PipelineScaling
}

// LokiSystems are the systems compared, in report order.
var LokiSystems = []LokiSystem{
	{"gpuletd", control.ScaleJointly},
	{"pipeline_unaware", control.ScalePerTask},
	{"hardware_only", control.ScaleHardware},
}

// LokiPeakBins is how finely the trace's peak is found: the busiest of
// this many equal stretches (two minutes each of the hour-long Azure
// conversation trace).
const LokiPeakBins = 30

// LokiBusyShare is how busy a 30th of the trace is, against its busiest,
// to count in the busy period (8 of the conversation trace's 30).
const LokiBusyShare = 0.8

// LokiComparison is the peak of the comparison run, in multiples of
// hardware_only's capacity.
const LokiComparison = 2.5

// DefaultLokiMinAccuracy is the accuracy floor of the experiment's
// pipeline, a share of its full accuracy: Loki gives up about 10% at its
// capacity (§6.3), and "there is usually a minimum level of acceptable
// accuracy" (§1).
const DefaultLokiMinAccuracy = 0.9

// Defaults of the loki experiment.
const (
	// DefaultLokiWorkers is the node's GPUs.
	DefaultLokiWorkers = 8
	// lokiReorganize is the planner's period: the trace's hour runs in a
	// few minutes, so the node re-plans every 5 s (the daemon's 20 s would
	// see the peak come and go in a dozen periods).
	lokiReorganize = 5 * time.Second
	// lokiStartup is how long a GPU takes to switch variants.
	lokiStartup = time.Second
	// The capacity is searched between the top/lokiSpan and the top,
	// bisecting lokiSteps times in proportion (to within 2.2%).
	lokiSpan  = 256
	lokiSteps = 8
	// lokiTrace is the trace replayed.
	lokiTrace = AzureTrace
)

// LokiOptions configure RunLoki.
type LokiOptions struct {
	// Data is the shared data folder (FindData).
	Data    string
	Workers int
	Seeds   []uint64
	// MinAccuracy is the pipeline's accuracy floor (0 means
	// DefaultLokiMinAccuracy, negative none).
	MinAccuracy float64
}

// LokiResult is the experiment's outcome.
type LokiResult struct {
	Workers int      `json:"workers"`
	Seeds   []uint64 `json:"seeds"`
	// FullAccuracy is the pipeline's end-to-end accuracy with its most
	// accurate variants; MinAccuracy the floor (a share of it); PeakFactor
	// the trace's busiest 30th over its mean; Busy the 30ths of the busy
	// period.
	FullAccuracy float64 `json:"full_accuracy"`
	MinAccuracy  float64 `json:"min_accuracy"`
	PeakFactor   float64 `json:"peak_factor"`
	BusyBins     []int   `json:"busy_bins"`
	// Capacity is each system's largest peak demand (requests/s at the
	// first task) served with under 1% of the requests violating the SLO,
	// over the seeds.
	Capacity map[string]Spread `json:"capacity"`
	// CapacityRatio is gpuletd's median capacity over hardware_only's.
	CapacityRatio float64 `json:"capacity_ratio"`
	// AccuracyAtCapacity is the mean end-to-end accuracy gpuletd served at
	// its capacity (0..1), RelativeAccuracy that over FullAccuracy.
	AccuracyAtCapacity float64 `json:"accuracy_at_capacity"`
	RelativeAccuracy   float64 `json:"relative_accuracy_at_capacity"`
	// PeakDemand is the comparison's peak: LokiComparison times
	// hardware_only's capacity.
	PeakDemand float64 `json:"peak_demand"`
	// Violations is the share of the requests that violated the SLO over
	// the whole trace, per system in the comparison (first seed); Busy over
	// the busy period; Worst in the worst 30th; Accuracy the mean served.
	Violations map[string]float64 `json:"violations"`
	Busy       map[string]float64 `json:"busy_violations"`
	Worst      map[string]float64 `json:"worst_violations"`
	Accuracy   map[string]float64 `json:"accuracy"`
	// Runs are the peak comparison's runs, for the time series.
	Runs map[string]*PipelineResult `json:"runs"`
	// IntervalS is the width of the time series' buckets, seconds.
	IntervalS float64 `json:"interval_s"`
}

// lokiWorkload is the traffic pipeline on workers GPUs with the trace
// replayed so that its busiest stretch runs at peak requests/s.
func lokiWorkload(trace string, tr *arrival.Trace, workers int, peak, minAcc float64, sc control.PipelineScaling, seed uint64) *workload.Workload {
	mean := peak / tr.PeakFactor(LokiPeakBins)
	reorg, start := workload.Duration(lokiReorganize), workload.Duration(lokiStartup)
	return &workload.Workload{
		Devices:    []workload.Device{{Profiles: "loki-1080ti", Count: workers}},
		Pipelines:  []workload.Pipeline{{Builtin: "traffic-analysis", Rate: mean, Arrival: "trace:" + trace, Scaling: string(sc), MinAccuracy: minAcc}},
		Duration:   workload.Duration(time.Duration(float64(tr.Len()) / mean * float64(time.Second))),
		Seed:       seed,
		Reorganize: &reorg,
		Startup:    &start,
	}
}

// RunLoki runs the experiment.
func RunLoki(ctx context.Context, o LokiOptions) (*LokiResult, error) {
	if o.Workers <= 0 {
		o.Workers = DefaultLokiWorkers
	}
	if len(o.Seeds) == 0 {
		o.Seeds = SeedList(1, 1)
	}
	switch {
	case o.MinAccuracy == 0:
		o.MinAccuracy = DefaultLokiMinAccuracy
	case o.MinAccuracy < 0:
		o.MinAccuracy = 0
	}
	path := filepath.Join(o.Data, lokiTrace)
	tr, err := readTrace(arrival.Spec{Kind: arrival.KindTrace}, path)
	if err != nil {
		return nil, fmt.Errorf("loki: %w", err)
	}
	busy := busyBins(tr.Bins(LokiPeakBins))
	res := &LokiResult{Workers: o.Workers, Seeds: o.Seeds, PeakFactor: tr.PeakFactor(LokiPeakBins), MinAccuracy: o.MinAccuracy, BusyBins: busy,
		Capacity: map[string]Spread{}, Violations: map[string]float64{}, Busy: map[string]float64{}, Worst: map[string]float64{},
		Accuracy: map[string]float64{}, Runs: map[string]*PipelineResult{}}
	run := func(sys LokiSystem, peak float64, seed uint64) (*PipelineResult, *Result, error) {
		floor := o.MinAccuracy
		if sys.Scaling == control.ScalePerTask {
			floor = 0
		}
		w := lokiWorkload(path, tr, o.Workers, peak, floor, sys.Scaling, seed)
		// One bucket of the time series per 30th of the trace.
		r, err := Run(ctx, w, Options{Interval: (w.Duration.Std() + LokiPeakBins - 1) / LokiPeakBins})
		if err != nil {
			return nil, nil, fmt.Errorf("loki %s at %.1f/s: %w", sys.Name, peak, err)
		}
		return &r.Pipelines[0], r, nil
	}
	// The search's top: what any variants carry on the workers, planned
	// the way the node plans (control.PlanPipeline's utilization).
	top, full, err := lokiTop(o.Workers, o.MinAccuracy)
	if err != nil {
		return nil, err
	}
	res.FullAccuracy = full
	accAt := map[uint64]float64{}
	for _, sys := range LokiSystems {
		sp, err := OverSeeds(o.Seeds, func(seed uint64) (float64, error) {
			holds := func(peak float64) (bool, float64, error) {
				pr, _, err := run(sys, peak, seed)
				if err != nil {
					return false, 0, err
				}
				return pr.Violations < 1-GoodputTarget && busyViolations(pr, busy) < 1-GoodputTarget, pr.Accuracy, nil
			}
			lo, hi := top/lokiSpan, top
			ok, loAcc, err := holds(lo)
			if err != nil || !ok {
				return 0, err
			}
			for range lokiSteps {
				mid := math.Sqrt(lo * hi)
				ok, acc, err := holds(mid)
				if err != nil {
					return 0, err
				}
				if ok {
					lo, loAcc = mid, acc
				} else {
					hi = mid
				}
			}
			if sys.Scaling == control.ScaleJointly {
				accAt[seed] = loAcc
			}
			return lo, nil
		})
		if err != nil {
			return nil, err
		}
		res.Capacity[sys.Name] = sp
	}
	gp, hw := res.Capacity["gpuletd"], res.Capacity["hardware_only"]
	if hw.Median > 0 {
		res.CapacityRatio = gp.Median / hw.Median
	}
	var accs []float64
	for _, s := range o.Seeds {
		accs = append(accs, accAt[s])
	}
	res.AccuracyAtCapacity = SpreadOf(accs).Median
	if full > 0 {
		res.RelativeAccuracy = res.AccuracyAtCapacity / full
	}
	res.PeakDemand = LokiComparison * hw.Median
	for _, sys := range LokiSystems {
		pr, r, err := run(sys, res.PeakDemand, o.Seeds[0])
		if err != nil {
			return nil, err
		}
		res.IntervalS = r.IntervalS
		res.Runs[sys.Name] = pr
		res.Violations[sys.Name] = pr.Violations
		res.Busy[sys.Name] = busyViolations(pr, busy)
		res.Worst[sys.Name] = pr.WorstViolations()
		res.Accuracy[sys.Name] = pr.Accuracy
	}
	return res, nil
}

// busyBins are the 30ths of the busy period: those with at least
// LokiBusyShare of the busiest one's arrivals.
func busyBins(counts []int) []int {
	most := 0
	for _, c := range counts {
		most = max(most, c)
	}
	var out []int
	for i, c := range counts {
		if float64(c) >= LokiBusyShare*float64(most) {
			out = append(out, i)
		}
	}
	return out
}

// busyViolations is the share of the requests arriving in bins that
// violated the SLO.
func busyViolations(pr *PipelineResult, bins []int) float64 {
	var req, bad float64
	for _, i := range bins {
		if i < len(pr.Arrived) {
			req += float64(pr.Arrived[i])
			bad += float64(pr.Violated[i])
		}
	}
	if req == 0 {
		return 0
	}
	return bad / req
}

// lokiTop is the search's top, 1.5 times the largest demand any variants
// down to the floor carry on the workers as the node plans them, and the
// pipeline's full accuracy.
func lokiTop(workers int, minAcc float64) (float64, float64, error) {
	w := &workload.Workload{Devices: []workload.Device{{Profiles: "loki-1080ti", Count: workers}},
		Pipelines: []workload.Pipeline{{Builtin: "traffic-analysis", Rate: 1, MinAccuracy: minAcc}}}
	node, err := w.Resolve()
	if err != nil {
		return 0, 0, fmt.Errorf("loki: %w", err)
	}
	p := node.Pipelines[0]
	return 1.5 * control.PipelineMaxDemand(p, workers), p.FullAccuracy(), nil
}
