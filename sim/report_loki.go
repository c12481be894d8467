package sim

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gpulet/gpuletd/internal/plotfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// WorstViolations is the largest share of violations in one bucket of a
// run's time series.
func (pr *PipelineResult) WorstViolations() float64 {
	worst := 0.0
	for _, v := range pr.ViolationSeries {
		worst = max(worst, v)
	}
	return worst
}

// WriteTable writes the loki experiment's summary and, per 30th of the
// trace in the comparison run, the demand and each system's accuracy, GPUs
// needed and violations.
func (r *LokiResult) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "traffic-analysis on %d loki-1080ti GPUs, Azure conversation trace (peak %.2f× its mean), accuracy floor %.2f of full (%.4f), seeds %v\n",
		r.Workers, r.PeakFactor, r.MinAccuracy, r.FullAccuracy, r.Seeds)
	fmt.Fprintf(w, "capacity (peak req/s with < 1%% violated, busy period and whole trace): gpuletd %s, pipeline_unaware %s, hardware_only %s\n",
		spreadText(r.Capacity["gpuletd"]), spreadText(r.Capacity["pipeline_unaware"]), spreadText(r.Capacity["hardware_only"]))
	fmt.Fprintf(w, "capacity ratio gpuletd / hardware_only: %.2f, at accuracy %.4f (%.3f of full)\n", r.CapacityRatio, r.AccuracyAtCapacity, r.RelativeAccuracy)
	fmt.Fprintf(w, "at a peak of %.1f req/s (%.1f× hardware_only's capacity), busy period = 30ths %v:\n\n", r.PeakDemand, LokiComparison, r.BusyBins)
	tw := tabwriter.NewWriter(w, 2, 4, 1, ' ', 0)
	fmt.Fprintln(tw, "| system\t| violated, whole trace\t| violated, busy period\t| worst 30th\t| accuracy served\t| GPUs needed (mean)\t|")
	fmt.Fprintln(tw, "| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t|")
	for _, s := range LokiSystems {
		pr := r.Runs[s.Name]
		if pr == nil {
			continue
		}
		fmt.Fprintf(tw, "| %s\t| %.2f%%\t| %.2f%%\t| %.1f%%\t| %.4f\t| %.2f\t|\n", s.Name, 100*r.Violations[s.Name], 100*r.Busy[s.Name],
			100*r.Worst[s.Name], pr.Accuracy, pr.MeanWorkers)
	}
	fmt.Fprintln(tw)
	fmt.Fprint(tw, "| 30th\t| demand (req/s)\t")
	for _, s := range LokiSystems {
		fmt.Fprintf(tw, "| %s: accuracy, GPUs, violated\t", s.Name)
	}
	fmt.Fprintln(tw, "|")
	fmt.Fprint(tw, "| ---\t| ---\t")
	for range LokiSystems {
		fmt.Fprint(tw, "| ---\t")
	}
	fmt.Fprintln(tw, "|")
	first := r.Runs[LokiSystems[0].Name]
	for i := 0; first != nil && i < min(len(first.Demand), LokiPeakBins); i++ {
		fmt.Fprintf(tw, "| %d\t| %.1f\t", i, first.Demand[i])
		for _, s := range LokiSystems {
			pr := r.Runs[s.Name]
			fmt.Fprintf(tw, "| %.3f, %.1f, %.2f%%\t", pr.AccuracySeries[i]/max(r.FullAccuracy, 1e-9), pr.WorkersSeries[i], 100*pr.ViolationSeries[i])
		}
		fmt.Fprintln(tw, "|")
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

func spreadText(s Spread) string {
	if len(s.Values) < 2 {
		return fmt.Sprintf("%.1f", s.Median)
	}
	return fmt.Sprintf("%.1f (%.1f–%.1f)", s.Median, s.Min, s.Max)
}

// Plot draws Loki's Figure 5 for the comparison run: over the trace, the
// demand, each system's accuracy (a share of full), GPUs needed and
// violations.
func (r *LokiResult) Plot(file string) error {
	dp := newPlot("demand", "time (s)", "requests/s")
	ap := newPlot("accuracy served", "time (s)", "share of full accuracy")
	gp := newPlot("GPUs the plan needs", "time (s)", "GPUs")
	vp := newPlot("SLO violations", "time (s)", "% of requests")
	at := func(i int) float64 { return (float64(i) + 0.5) * r.IntervalS }
	if first := r.Runs[LokiSystems[0].Name]; first != nil {
		var d plotter.XYs
		for i := range min(len(first.Demand), LokiPeakBins) {
			d = append(d, plotter.XY{X: at(i), Y: first.Demand[i]})
		}
		if err := addLine(dp, "demand", 0, d, false); err != nil {
			return err
		}
	}
	for k, s := range LokiSystems {
		pr := r.Runs[s.Name]
		if pr == nil {
			continue
		}
		var acc, gpus, viol plotter.XYs
		for i := range min(len(pr.Demand), LokiPeakBins) {
			if pr.AccuracySeries[i] > 0 {
				acc = append(acc, plotter.XY{X: at(i), Y: pr.AccuracySeries[i] / max(r.FullAccuracy, 1e-9)})
			}
			gpus = append(gpus, plotter.XY{X: at(i), Y: pr.WorkersSeries[i]})
			viol = append(viol, plotter.XY{X: at(i), Y: 100 * pr.ViolationSeries[i]})
		}
		for _, l := range []struct {
			p  *plot.Plot
			xy plotter.XYs
		}{{ap, acc}, {gp, gpus}, {vp, viol}} {
			if err := addLine(l.p, s.Name, k, l.xy, true); err != nil {
				return err
			}
		}
	}
	for _, p := range []*plot.Plot{ap, gp, vp} {
		p.Legend.Left = false
	}
	dp.Y.Min, gp.Y.Min, vp.Y.Min = 0, 0, 0
	return plotfile.Save(file, [][]*plot.Plot{{dp}, {ap}, {gp}, {vp}}, 24*vg.Centimeter, 6*vg.Centimeter)
}
