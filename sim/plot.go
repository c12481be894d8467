package sim

import (
	"image/color"

	"github.com/gpulet/gpuletd/internal/plotfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// ErrPlotFormat is returned for a plot file that is neither .svg nor .png.
var ErrPlotFormat = plotfile.ErrFormat

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
	l.Color = plotfile.Color(i)
	l.Width = vg.Points(1.5)
	p.Add(l)
	if points {
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		s.Color = plotfile.Color(i)
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
	b.Color = plotfile.Color(s)
	b.LineStyle.Width = 0
	b.Offset = w * vg.Length(float64(s)-float64(n-1)/2)
	p.Add(b)
	p.Legend.Add(name, b)
	return nil
}
