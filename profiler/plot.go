package profiler

import (
	"fmt"
	"image/color"

	"github.com/gpulet/gpuletd/internal/plotfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ErrPlotFormat is returned for a plot file that is neither .svg nor .png.
var ErrPlotFormat = plotfile.ErrFormat

// WritePlot draws the result into file, SVG or PNG by its extension: on the
// left L(b,p) against the batch, one curve per partition size, the knee's
// size drawn thicker; on the right the affordable rate against the size
// (the SLO's curve, else the largest batch's) with its knee marked.
func WritePlot(res Result, file string) error {
	if err := plotfile.CheckName(file); err != nil {
		return err
	}
	knee, curve, label := plotKnee(res)
	left, err := latencyPlot(res, knee)
	if err != nil {
		return fmt.Errorf("write plot %s: %w", file, err)
	}
	right, err := ratePlot(res, curve, label, knee)
	if err != nil {
		return fmt.Errorf("write plot %s: %w", file, err)
	}
	return plotfile.Save(file, [][]*plot.Plot{{left, right}}, 13*vg.Centimeter, 11*vg.Centimeter)
}

// plotKnee picks the curve the right panel shows: the SLO's when there is
// one, else the largest batch's.
func plotKnee(res Result) (knee int, pts plotter.XYs, label string) {
	if c := res.Knees.SLO; c != nil {
		for _, p := range c.Points {
			pts = append(pts, plotter.XY{X: float64(p.Size), Y: p.Rate})
		}
		return c.Knee, pts, fmt.Sprintf("SLO %.3g ms (largest b with 2·L ≤ SLO)", res.Knees.SLOMS)
	}
	for i := len(res.Knees.Batches) - 1; i >= 0; i-- {
		bk := res.Knees.Batches[i]
		if bk.Err != "" || len(bk.Curve.Points) == 0 {
			continue
		}
		for _, p := range bk.Curve.Points {
			pts = append(pts, plotter.XY{X: float64(p.Size), Y: p.Rate})
		}
		return bk.Curve.Knee, pts, fmt.Sprintf("batch %d", bk.Batch)
	}
	return 0, nil, ""
}

func latencyPlot(res Result, knee int) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s on %s: L(b,p)", res.Model.Name, res.DeviceType)
	p.X.Label.Text = "batch size b"
	p.Y.Label.Text = "p50 latency (ms)"
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	for i, size := range res.Sizes {
		var xy plotter.XYs
		for _, pt := range res.Points {
			if pt.Size == size && pt.Complete {
				xy = append(xy, plotter.XY{X: float64(pt.Batch), Y: pt.P50MS})
			}
		}
		if len(xy) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, err
		}
		col := plotfile.Color(i)
		line.Color, points.Color = col, col
		name := fmt.Sprintf("p = %d%%", size)
		if size == knee {
			line.Width = vg.Points(3)
			name += " (knee)"
		}
		p.Add(line, points)
		p.Legend.Add(name, line, points)
	}
	return p, nil
}

func ratePlot(res Result, pts plotter.XYs, label string, knee int) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "affordable rate, knee = max curvature"
	p.X.Label.Text = "gpu-let size p (%)"
	p.Y.Label.Text = "requests/s"
	p.X.Min, p.X.Max = 0, 100
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	if len(pts) == 0 {
		return p, nil
	}
	line, points, err := plotter.NewLinePoints(append(plotter.XYs{{X: 0, Y: 0}}, pts...))
	if err != nil {
		return nil, err
	}
	p.Add(line, points)
	p.Legend.Add(label, line, points)
	for _, xy := range pts {
		if int(xy.X) != knee {
			continue
		}
		mark, err := plotter.NewScatter(plotter.XYs{xy})
		if err != nil {
			return nil, err
		}
		mark.GlyphStyle.Shape = draw.CrossGlyph{}
		mark.GlyphStyle.Radius = vg.Points(8)
		mark.GlyphStyle.Color = color.RGBA{R: 214, G: 39, B: 40, A: 255}
		p.Add(mark)
		p.Legend.Add(fmt.Sprintf("knee: p = %d%%", knee), mark)
	}
	return p, nil
}
