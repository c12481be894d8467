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

// fluctRow is how many 20 s windows one table row sums.
const fluctRow = 5

// WriteFluct writes each setting's totals and, per 100 s, the offered rate,
// goodput, mean gpu-let sizes in use and violations.
func WriteFluct(w io.Writer, rs []FluctResult) error {
	for _, r := range rs {
		res := r.Result
		started, loaded := res.Moves()
		fmt.Fprintf(w, "batches %s: R* %.0f req/s, %d requests, %.3f%% violated (late %d, rejected %d), %d plans, %d reorganizations (%d gpu-lets started, %d models loaded on kept ones), mean gpu-let sizes in use %.0f%%\n",
			cappedName(r.Capped), r.RStar, res.Requests, 100*r.Violations, res.Late, res.Rejections(), len(res.Plans), res.Reorganizations,
			started, loaded, res.MeanSizeSum)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 4, 1, ' ', 0)
	fmt.Fprint(tw, "| from (s)\t| offered (req/s)\t")
	for _, r := range rs {
		c := "default"
		if r.Capped {
			c = "capped"
		}
		fmt.Fprintf(tw, "| goodput, %s\t| sizes in use, %s\t| violated, %s\t", c, c, c)
	}
	fmt.Fprintln(tw, "|")
	fmt.Fprint(tw, "| ---\t| ---\t")
	for range rs {
		fmt.Fprint(tw, "| ---\t| ---\t| ---\t")
	}
	fmt.Fprintln(tw, "|")
	if len(rs) == 0 {
		return tw.Flush()
	}
	wins := rs[0].Result.Windows
	for i := 0; i < len(wins); i += fluctRow {
		j := min(i+fluctRow, len(wins))
		span := float64(j-i) * rs[0].Result.WindowS
		var req uint64
		for _, x := range wins[i:j] {
			req += x.Requests
		}
		fmt.Fprintf(tw, "| %.0f\t| %.0f\t", wins[i].StartS, float64(req)/span)
		for _, r := range rs {
			var viol uint64
			for _, x := range r.Result.Windows[i:j] {
				viol += x.Violations
			}
			from, to := int(wins[i].StartS/r.Result.IntervalS), int((wins[i].StartS+span)/r.Result.IntervalS)
			size := 0.0
			for _, v := range r.Result.SizeSum[from:min(to, len(r.Result.SizeSum))] {
				size += v / float64(to-from)
			}
			share := 0.0
			if req > 0 {
				share = float64(viol) / float64(req)
			}
			fmt.Fprintf(tw, "| %.0f\t| %.0f%%\t| %.2f%%\t", float64(req-viol)/span, size, 100*share)
		}
		fmt.Fprintln(tw, "|")
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// PlotFluct draws, over time, the offered rate and goodput, the sum of the
// gpu-let sizes in use and the violations per window, one line per setting.
func PlotFluct(file string, rs []FluctResult) error {
	rp := newPlot("offered rate and goodput per 20 s", "time (s)", "req/s")
	sp := newPlot("sum of gpu-let sizes in use", "time (s)", "% of one GPU")
	vp := newPlot("SLO violations per 20 s", "time (s)", "% of requests")
	if len(rs) == 0 {
		return plotfile.Save(file, [][]*plot.Plot{{rp}, {sp}, {vp}}, 24*vg.Centimeter, 7*vg.Centimeter)
	}
	var offered plotter.XYs
	for _, x := range rs[0].Result.Windows {
		offered = append(offered, plotter.XY{X: x.StartS, Y: float64(x.Requests) / rs[0].Result.WindowS})
	}
	if err := addLine(rp, "offered", len(rs), offered, false); err != nil {
		return err
	}
	for i, r := range rs {
		name := "batches " + cappedName(r.Capped)
		var good, viol, size plotter.XYs
		for _, x := range r.Result.Windows {
			good = append(good, plotter.XY{X: x.StartS, Y: float64(x.Requests-x.Violations) / r.Result.WindowS})
			viol = append(viol, plotter.XY{X: x.StartS, Y: 100 * x.Share})
		}
		for j, v := range r.Result.SizeSum {
			size = append(size, plotter.XY{X: float64(j) * r.Result.IntervalS, Y: v})
		}
		if err := addLine(rp, "goodput, "+name, i, good, false); err != nil {
			return err
		}
		if err := addLine(sp, name, i, size, false); err != nil {
			return err
		}
		if err := addLine(vp, name, i, viol, false); err != nil {
			return err
		}
	}
	rp.Y.Min, sp.Y.Min, vp.Y.Min = 0, 0, 0
	return plotfile.Save(file, [][]*plot.Plot{{rp}, {sp}, {vp}}, 24*vg.Centimeter, 7*vg.Centimeter)
}

func cappedName(c bool) string {
	if c {
		return "capped at the plan's"
	}
	return "uncapped"
}
