package sim

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gpulet/gpuletd/gpulet/planbench"
	"github.com/gpulet/gpuletd/internal/plotfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// TemporalRatio is the mean over mixes of served gpulet-int over served
// base (a system name), counting mixes where base served something.
func TemporalRatio(r *TemporalResult, base string) float64 {
	sum, n := 0.0, 0
	for _, row := range r.Rows {
		if b := row.Served[base]; b > 0 {
			sum += row.Served["gpulet-int"] / b
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// WriteTemporal prints the planned and served rates per mix, then the plan
// shapes, so that a reader sees whether anything was partitioned.
func WriteTemporal(w io.Writer, r *TemporalResult) error {
	fmt.Fprintf(w, "set %s, %d GPUs, seeds %v, batches on shared gpu-lets %s; served: median [min–max] req/s with < 1%% late or lost, up to the planner's max\n",
		r.Set, TemporalGPUs, r.Seeds, map[bool]string{true: "capped at the plan's", false: "uncapped"}[r.BatchCap])
	tw := tabwriter.NewWriter(w, 2, 4, 1, ' ', 0)
	fmt.Fprint(tw, "| mix\t")
	for _, p := range TemporalPlanners {
		fmt.Fprintf(tw, "| planned %s\t", p)
	}
	for _, s := range TemporalSystems {
		fmt.Fprintf(tw, "| served %s\t", s.Name)
	}
	fmt.Fprintln(tw, "| gpulet-int / planned\t| gpulet-int / sbp-eager\t|")
	fmt.Fprintln(tw, strings.Repeat("| ---\t", len(TemporalPlanners)+len(TemporalSystems)+3)+"|")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "| %s\t", row.Mix)
		for _, p := range TemporalPlanners {
			mark := ""
			if slices.Contains(row.LowerBounds, p) {
				mark = "≥"
			}
			fmt.Fprintf(tw, "| %s%.0f\t", mark, row.Planned[p])
		}
		for _, s := range TemporalSystems {
			sp, ok := row.Spread[s.Name]
			if !ok {
				fmt.Fprint(tw, "| —\t") // not run (TemporalOptions.Systems)
				continue
			}
			fmt.Fprintf(tw, "| %.0f [%.0f–%.0f]\t", sp.Median, sp.Min, sp.Max)
		}
		fmt.Fprintf(tw, "| %s\t| %s\t|\n", servedRatio(row.Served, "gpulet-int", row.Planned["gpulet-int"]), servedRatio(row.Served, "gpulet-int", row.Served["sbp-eager"]))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	fmt.Fprintf(w, "average served gpulet-int / sbp: %.2f, / sbp-eager: %.2f\n", TemporalRatio(r, "sbp"), TemporalRatio(r, "sbp-eager"))
	for _, row := range r.Rows {
		if len(row.LowerBounds) > 0 {
			fmt.Fprintf(w, "≥: a plan of the max-rate search ran past %s and counted as not schedulable; the figure is a lower bound\n", planbench.DefaultPlanLimit)
			break
		}
	}
	fmt.Fprintln(w, "plans at each planner's max:")
	for _, row := range r.Rows {
		for _, p := range TemporalPlanners {
			fmt.Fprintf(w, "  %s %s: %s\n", row.Mix, p, row.Shape[p])
		}
	}
	return nil
}

// servedRatio prints served[name] / base to three places, "—" when either is
// missing.
func servedRatio(served map[string]float64, name string, base float64) string {
	v, ok := served[name]
	if !ok || base == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f", v/base)
}

// PlotTemporal draws each mix's planned and served rates.
func PlotTemporal(file string, r *TemporalResult) error {
	p := newPlot("max rate with < 1% late or lost (median over seeds)", "", "req/s")
	var mixes []string
	for _, row := range r.Rows {
		mixes = append(mixes, row.Mix)
	}
	series := len(TemporalSystems) + 1
	var planned []float64
	for _, row := range r.Rows {
		planned = append(planned, row.Planned["gpulet-int"])
	}
	if err := addBars(p, "planned gpulet-int", 0, series, planned); err != nil {
		return err
	}
	for si, s := range TemporalSystems {
		var vals []float64
		for _, row := range r.Rows {
			vals = append(vals, row.Served[s.Name])
		}
		if err := addBars(p, "served "+s.Name, si+1, series, vals); err != nil {
			return err
		}
	}
	p.NominalX(mixes...)
	p.Y.Min = 0
	return plotfile.Save(file, [][]*plot.Plot{{p}}, 18*vg.Centimeter, 10*vg.Centimeter)
}
