// Package plotfile writes gonum plots to SVG or PNG files, the format
// chosen by the file's extension, with one colour palette for every plot
// gpuletd draws.
package plotfile

import (
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ErrFormat is returned for a plot file that is neither .svg nor .png.
var ErrFormat = errors.New("unknown plot format")

// palette are the series' colours, in order.
var palette = []color.RGBA{
	{R: 31, G: 119, B: 180, A: 255}, {R: 255, G: 127, B: 14, A: 255}, {R: 44, G: 160, B: 44, A: 255},
	{R: 214, G: 39, B: 40, A: 255}, {R: 148, G: 103, B: 189, A: 255}, {R: 140, G: 86, B: 75, A: 255},
	{R: 227, G: 119, B: 194, A: 255}, {R: 127, G: 127, B: 127, A: 255},
}

// Color is the i-th series' colour; the palette repeats.
func Color(i int) color.RGBA { return palette[i%len(palette)] }

// CheckName returns ErrFormat, wrapped, unless file ends in .svg or .png.
func CheckName(file string) error {
	if ext := strings.ToLower(filepath.Ext(file)); ext != ".svg" && ext != ".png" {
		return fmt.Errorf("write plot %s: %w: use .svg or .png", file, ErrFormat)
	}
	return nil
}

// Save draws a grid of plots (rows of columns, nil for an empty tile) into
// file, each tile width × height, making the file's folder if needed.
func Save(file string, grid [][]*plot.Plot, width, height vg.Length) error {
	if err := CheckName(file); err != nil {
		return err
	}
	rows, cols := len(grid), 0
	for _, r := range grid {
		cols = max(cols, len(r))
	}
	// Align wants every row as wide as the widest: pad short ones with
	// empty tiles.
	padded := make([][]*plot.Plot, rows)
	for i, r := range grid {
		padded[i] = append(append(make([]*plot.Plot, 0, cols), r...), make([]*plot.Plot, cols-len(r))...)
	}
	grid = padded
	w, h := width*vg.Length(cols), height*vg.Length(rows)
	var c vg.CanvasWriterTo
	var dc draw.Canvas
	if strings.ToLower(filepath.Ext(file)) == ".svg" {
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
