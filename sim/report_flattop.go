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

// WriteTable writes every point.
func (r *FlatTopResult) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "capacity (deferred, 99%% within SLO): %.0f req/s\n\n", r.Capacity)
	tw := tabwriter.NewWriter(w, 2, 4, 1, ' ', 0)
	fmt.Fprintln(tw, "| policy\t| load\t| offered\t| goodput\t| within SLO\t| GPU busy\t| GPUs planned\t| mean batch\t|")
	fmt.Fprintln(tw, "| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t|")
	for _, p := range r.Points {
		fmt.Fprintf(tw, "| %s\t| %.1f\t| %.0f\t| %.0f\t| %.2f%%\t| %.2f\t| %d\t| %.1f\t|\n",
			p.Policy, p.Load, p.Offered, p.Goodput, 100*p.Attainment, p.Busy, p.GPUs, p.MeanBatch)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// Plot draws goodput and GPU busy fraction against the load.
func (r *FlatTopResult) Plot(file string) error {
	gp := newPlot("goodput", "offered load (× capacity)", "goodput / capacity")
	bp := newPlot("GPU busy fraction", "offered load (× capacity)", "busy")
	for i, pol := range FlatTopPolicies {
		var g, b plotter.XYs
		for _, p := range r.Points {
			if p.Policy == pol {
				g = append(g, plotter.XY{X: p.Load, Y: p.Goodput / r.Capacity})
				b = append(b, plotter.XY{X: p.Load, Y: p.Busy})
			}
		}
		if err := addLine(gp, pol, i, g, true); err != nil {
			return err
		}
		if err := addLine(bp, pol, i, b, true); err != nil {
			return err
		}
	}
	if err := addLine(bp, "load (proportional use)", len(FlatTopPolicies), plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}}, false); err != nil {
		return err
	}
	gp.Y.Min, bp.Y.Min, bp.Y.Max = 0, 0, 1.05
	return plotfile.Save(file, [][]*plot.Plot{{gp, bp}}, 13*vg.Centimeter, 10*vg.Centimeter)
}
