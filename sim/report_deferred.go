package sim

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gpulet/gpuletd/internal/plotfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// WriteTable writes the models of each subset, every point and, per subset
// and timing, the smallest, median and largest ratio.
func (r *DvEResult) WriteTable(w io.Writer) error {
	for _, sub := range DvESubsets {
		fmt.Fprintf(w, "%s: %s\n", sub, strings.Join(r.Models[sub], ", "))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 4, 1, ' ', 0)
	fmt.Fprintln(tw, "| subset\t| arrival\t| SLO\t| timing\t| deferred\t| eager\t| deferred / eager\t|")
	fmt.Fprintln(tw, "| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t|")
	for _, p := range r.Points {
		fmt.Fprintf(tw, "| %s\t| %s\t| %gx\t| %s\t| %.0f\t| %.0f\t| %s\t|\n", p.Subset, p.Arrival, p.SLOScale, p.Timing, p.Deferred, p.Eager, ratio(p))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "| subset\t| timing\t| min\t| median\t| max\t| below 0.95\t|")
	fmt.Fprintln(tw, "| ---\t| ---\t| ---\t| ---\t| ---\t| ---\t|")
	for _, sub := range DvESubsets {
		for _, tm := range Timings {
			rs := r.Ratios(sub, tm.Name)
			if len(rs) == 0 {
				continue
			}
			below := 0
			for _, v := range rs {
				if v < 0.95 {
					below++
				}
			}
			fmt.Fprintf(tw, "| %s\t| %s\t| %.2f\t| %.2f\t| %.2f\t| %d of %d\t|\n", sub, tm.Name, rs[0], rs[len(rs)/2], rs[len(rs)-1], below, len(rs))
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

func ratio(p DvEPoint) string {
	if p.Eager == 0 {
		if p.Deferred == 0 {
			return "- (both 0)"
		}
		return "∞"
	}
	return fmt.Sprintf("%.2f", p.Ratio)
}

// Ratios returns a subset's ratios under a timing, ascending (∞ when eager
// serves nothing and deferred something; points where both serve nothing
// are left out).
func (r *DvEResult) Ratios(sub DvESubset, timing string) []float64 {
	var out []float64
	for _, p := range r.Points {
		if p.Subset != sub || p.Timing != timing {
			continue
		}
		switch {
		case p.Eager > 0:
			out = append(out, p.Ratio)
		case p.Deferred > 0:
			out = append(out, math.Inf(1))
		}
	}
	slices.Sort(out)
	return out
}

// Plot draws every configuration's ratio, one panel per timing, one colour
// per subset, with Symphony's 0.95 and 1.35 marks.
func (r *DvEResult) Plot(file string) error {
	var panels []*plot.Plot
	for _, tm := range Timings {
		p := newPlot("deferred / eager goodput ("+tm.Name+")", "configuration (arrival × SLO scale)", "ratio")
		n := 0.0
		for si, sub := range DvESubsets {
			var xy plotter.XYs
			i := 0
			for _, pt := range r.Points {
				if pt.Subset != sub || pt.Timing != tm.Name {
					continue
				}
				i++
				if pt.Eager > 0 {
					xy = append(xy, plotter.XY{X: float64(i), Y: pt.Ratio})
				}
			}
			n = max(n, float64(i))
			s, err := plotter.NewScatter(xy)
			if err != nil {
				return err
			}
			s.Color = plotfile.Color(si)
			p.Add(s)
			p.Legend.Add(string(sub), s)
		}
		if err := addHLine(p, "0.95", 0.95, 0, n+1); err != nil {
			return err
		}
		if err := addHLine(p, "1.35", 1.35, 0, n+1); err != nil {
			return err
		}
		p.Y.Min = 0
		panels = append(panels, p)
	}
	return plotfile.Save(file, [][]*plot.Plot{panels}, 14*vg.Centimeter, 10*vg.Centimeter)
}
