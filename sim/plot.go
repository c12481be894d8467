package sim

import (
	"errors"
	"fmt"
	"image/color"
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

// colors are the series' colours, in order.
var colors = []color.RGBA{
	{R: 31, G: 119, B: 180, A: 255}, {R: 255, G: 127, B: 14, A: 255}, {R: 44, G: 160, B: 44, A: 255},
	{R: 214, G: 39, B: 40, A: 255}, {R: 148, G: 103, B: 189, A: 255}, {R: 140, G: 86, B: 75, A: 255},
	{R: 227, G: 119, B: 194, A: 255}, {R: 127, G: 127, B: 127, A: 255},
}

func colorOf(i int) color.RGBA { return colors[i%len(colors)] }

// savePlots draws a grid of plots (rows of columns) into file, SVG or PNG by
// its extension, each tile width × height.
func savePlots(file string, grid [][]*plot.Plot, width, height vg.Length) error {
	ext := strings.ToLower(filepath.Ext(file))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("write plot %s: %w: use .svg or .png", file, ErrPlotFormat)
	}
	rows, cols := len(grid), 0
	for _, r := range grid {
		cols = max(cols, len(r))
	}
	w, h := width*vg.Length(cols), height*vg.Length(rows)
	var c vg.CanvasWriterTo
	var dc draw.Canvas
	if ext == ".svg" {
		sc := vgsvg.New(w, h)
		c, dc = sc, draw.New(sc)
	} else {
		ic := vgimg.New(w, h)
		c, dc = vgimg.PngCanvas{Canvas: ic}, draw.New(ic)
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Centimeter, PadY: vg.Centimeter,
		PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3, PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3}
	canvases := plot.Align(grid, tiles, dc)
	for i, r := range grid {
		for j, p := range r {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("write plot: %w", err)
	}
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("write plot: %w", err)
	}
	if _, err := c.WriteTo(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("write plot %s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write plot %s: %w", file, err)
	}
	return nil
}

// newPlot makes a plot with a title, axis labels, a grid and the legend at
// the top left.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	return p
}

// addLine adds a line with points in colour i.
func addLine(p *plot.Plot, name string, i int, xy plotter.XYs, points bool) error {
	if len(xy) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.Color = colorOf(i)
	l.Width = vg.Points(1.5)
	p.Add(l)
	if points {
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		s.Color = colorOf(i)
		p.Add(s)
		p.Legend.Add(name, l, s)
		return nil
	}
	p.Legend.Add(name, l)
	return nil
}

// addHLine adds a dashed horizontal line at y over [x0, x1].
func addHLine(p *plot.Plot, name string, y, x0, x1 float64) error {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
	if err != nil {
		return err
	}
	l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	l.Color = color.RGBA{A: 255}
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
	return nil
}

// addBars adds grouped bars: series s of n at offset within each group.
func addBars(p *plot.Plot, name string, s, n int, values []float64) error {
	w := vg.Points(60 / float64(n))
	b, err := plotter.NewBarChart(plotter.Values(values), w)
	if err != nil {
		return err
	}
	b.Color = colorOf(s)
	b.LineStyle.Width = 0
	b.Offset = w * vg.Length(float64(s)-float64(n-1)/2)
	p.Add(b)
	p.Legend.Add(name, b)
	return nil
}
