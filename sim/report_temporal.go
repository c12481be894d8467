package sim

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gpulet/gpuletd/internal/plotfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// TemporalAverage is the mean ratio over the mixes of one executor setting
// (rows without a ratio left out).
func TemporalAverage(rows []TemporalRow, capped bool) float64 {
	s, n := 0.0, 0
	for _, r := range rows {
		if r.Capped == capped && r.Ratio > 0 {
			s += r.Ratio
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// WriteTemporal writes the rows as a Markdown table and the averages.
func WriteTemporal(w io.Writer, rows []TemporalRow) error {
	tw := tabwriter.NewWriter(w, 2, 4, 1, ' ', 0)
	fmt.Fprint(tw, "| mix\t| batches on shared gpu-lets\t")
	for _, s := range TemporalSystems {
		fmt.Fprintf(tw, "| %s\t", s.Name)
	}
	fmt.Fprintln(tw, "| gpulet-int / sbp\t|")
	fmt.Fprintln(tw, "| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t|")
	for _, r := range rows {
		fmt.Fprintf(tw, "| %s\t| %s\t", r.Mix, cappedName(r.Capped))
		for _, s := range TemporalSystems {
			fmt.Fprintf(tw, "| %.0f\t", r.Goodput[s.Name])
		}
		fmt.Fprintf(tw, "| %.2f\t|\n", r.Ratio)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	for _, c := range []bool{false, true} {
		fmt.Fprintf(w, "average gpulet-int / sbp, batches %s: %.2f\n", cappedName(c), TemporalAverage(rows, c))
	}
	return nil
}

func cappedName(c bool) string {
	if c {
		return "capped at the plan's"
	}
	return "as the daemon sets them"
}

// PlotTemporal draws each mix's goodput by system, one panel per executor
// setting.
func PlotTemporal(file string, rows []TemporalRow) error {
	var panels []*plot.Plot
	for _, c := range []bool{false, true} {
		p := newPlot("max goodput, < 1% SLO violations (batches "+cappedName(c)+")", "", "goodput (req/s)")
		var mixes []string
		for _, r := range rows {
			if r.Capped == c {
				mixes = append(mixes, r.Mix)
			}
		}
		for si, s := range TemporalSystems {
			var vals []float64
			for _, r := range rows {
				if r.Capped == c {
					vals = append(vals, r.Goodput[s.Name])
				}
			}
			if err := addBars(p, s.Name, si, len(TemporalSystems), vals); err != nil {
				return err
			}
		}
		p.NominalX(mixes...)
		p.Y.Min = 0
		panels = append(panels, p)
	}
	return plotfile.Save(file, [][]*plot.Plot{panels}, 15*vg.Centimeter, 10*vg.Centimeter)
}
