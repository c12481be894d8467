package plotfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

func TestSave(t *testing.T) {
	p := plot.New()
	p.Title.Text = "t"
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		magic string
	}{{"a/b/plot.svg", "<?xml"}, {"plot.PNG", "\x89PNG"}} {
		file := filepath.Join(dir, tc.name)
		require.NoError(t, Save(file, [][]*plot.Plot{{p, nil}, {p}}, 5*vg.Centimeter, 4*vg.Centimeter))
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		require.Equal(t, tc.magic, string(b[:len(tc.magic)]))
	}
	err := Save(filepath.Join(dir, "plot.pdf"), [][]*plot.Plot{{p}}, vg.Centimeter, vg.Centimeter)
	require.ErrorIs(t, err, ErrFormat)
	require.NoFileExists(t, filepath.Join(dir, "plot.pdf"))
	require.Equal(t, Color(0), Color(len(palette)))
}
