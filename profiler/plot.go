package profiler

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ErrPlotFormat is returned for a plot file that is neither .svg nor .png.
var ErrPlotFormat = errors.New("unknown plot format")

// palette colours the partition sizes.
var palette = []color.RGBA{
	{R: 31, G: 119, B: 180, A: 255}, {R: 255, G: 127, B: 14, A: 255}, {R: 44, G: 160, B: 44, A: 255},
	{R: 214, G: 39, B: 40, A: 255}, {R: 148, G: 103, B: 189, A: 255}, {R: 140, G: 86, B: 75, A: 255},
	{R: 227, G: 119, B: 194, A: 255}, {R: 127, G: 127, B: 127, A: 255},
}

// WritePlot draws the result into file, SVG or PNG by its extension: on the
// left L(b,p) against the batch, one curve per partition size, the knee's
// size drawn thicker; on the right the affordable rate against the size
// (the SLO's curve, else the largest batch's) with its knee marked.
func WritePlot(res Result, file string) error {
	ext := strings.ToLower(filepath.Ext(file))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("write plot %s: %w: use .svg or .png", file, ErrPlotFormat)
	}
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("write plot: %w", err)
	}
	if err := writePlot(res, ext, f); err != nil {
		_ = f.Close()
		return fmt.Errorf("write plot %s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write plot %s: %w", file, err)
	}
	return nil
}

func writePlot(res Result, ext string, w io.Writer) error {
	knee, curve, label := plotKnee(res)
	left, err := latencyPlot(res, knee)
	if err != nil {
		return err
	}
	right, err := ratePlot(res, curve, label, knee)
	if err != nil {
		return err
	}
	width, height := 26*vg.Centimeter, 11*vg.Centimeter
	var c vg.CanvasWriterTo
	var dc draw.Canvas
	switch ext {
	case ".svg":
		sc := vgsvg.New(width, height)
		c, dc = sc, draw.New(sc)
	default:
		ic := vgimg.New(width, height)
		c, dc = vgimg.PngCanvas{Canvas: ic}, draw.New(ic)
	}
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Centimeter, PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3,
		PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3}
	plots := [][]*plot.Plot{{left, right}}
	canvases := plot.Align(plots, tiles, dc)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	_, err = c.WriteTo(w)
	return err
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
		col := palette[i%len(palette)]
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
