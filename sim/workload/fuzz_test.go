package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzDecode: Decode never panics, and what it accepts validates and
// builds or fails with an error (never a panic).
func FuzzDecode(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	require.NoError(f, err)
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(string(b))
	}
	f.Add("devices: [{profiles: igniter-v100, count: 1}]\nmodels: [{name: a, profile: alexnet, rate: 1e308}]\n")
	f.Fuzz(func(t *testing.T, doc string) {
		w, err := Decode(strings.NewReader(doc), "fuzz.yaml")
		if err != nil {
			return
		}
		require.NoError(t, w.Validate())
		_, _, _ = w.Input()
	})
}
