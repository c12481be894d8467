package sim

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gpulet/gpuletd/internal/plotfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// Table2JSON is what `gpuletd bench symphony-table2 --json` prints: per
// model the bound and each policy's goodput, req/s (median over the seeds),
// of the rows of one timing.
func Table2JSON(rows []Table2Row, timing string) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for _, r := range rows {
		if r.Timing != timing {
			continue
		}
		m := map[string]float64{"bound": r.Bound}
		for _, p := range Table2Policies {
			m[p] = r.Goodput[p]
		}
		out[r.Model] = m
	}
	return out
}

// WriteTable2 writes the rows as a Markdown table.
func WriteTable2(w io.Writer, rows []Table2Row) error {
	tw := tabwriter.NewWriter(w, 2, 4, 1, ' ', 0)
	fmt.Fprintln(tw, "| model\t| timing\t| bound\t| Symphony measured\t| deferred (range)\t| eager\t| timeout\t| flex\t| deferred / bound\t| mean batch (deferred, eager)\t|")
	fmt.Fprintln(tw, "| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t|")
	for _, r := range rows {
		d := r.Spread["deferred"]
		fmt.Fprintf(tw, "| %s\t| %s\t| %.0f\t| %.0f\t| %.0f (%.0f–%.0f)\t| %.0f\t| %.0f (%s)\t| %.0f\t| %.1f%%\t| %.1f, %.1f\t|\n",
			r.Model, r.Timing, r.Bound, r.Measured, r.Goodput["deferred"], d.Min, d.Max, r.Goodput["eager"], r.Goodput["timeout"], r.BestTimeout,
			r.Goodput["flex"], 100*r.Goodput["deferred"]/r.Bound, r.MeanBatch["deferred"], r.MeanBatch["eager"])
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// PlotTable2 draws each model's goodputs as bars beside the bound and
// Symphony's measurement, one panel per model, one bar colour per timing.
func PlotTable2(file string, rows []Table2Row) error {
	var panels []*plot.Plot
	for _, m := range Table2Models {
		p := newPlot(m.Name+" on 8 GPUs (Symphony Table 2)", "", "goodput (req/s)")
		var timings []string
		for _, r := range rows {
			if r.Model == m.Name {
				timings = append(timings, r.Timing)
			}
		}
		for ti, tm := range timings {
			for _, r := range rows {
				if r.Model != m.Name || r.Timing != tm {
					continue
				}
				vals := []float64{r.Bound, r.Measured}
				for _, pol := range Table2Policies {
					vals = append(vals, r.Goodput[pol])
				}
				if err := addBars(p, tm, ti, len(timings), vals); err != nil {
					return err
				}
			}
		}
		p.NominalX(append([]string{"bound", "Symphony"}, Table2Policies...)...)
		p.Y.Min = 0
		p.Legend.Left = false
		panels = append(panels, p)
	}
	return plotfile.Save(file, [][]*plot.Plot{panels}, 14*vg.Centimeter, 10*vg.Centimeter)
}
