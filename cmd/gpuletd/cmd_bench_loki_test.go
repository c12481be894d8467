package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchLoki runs the loki experiment with one seed: its JSON has the
// fields the issue names, gpuletd carries at least 2.5 times what hardware
// scaling alone carries at no less than 0.87 of full accuracy, and a plot is
// written only where asked.
func TestBenchLoki(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "loki.svg")
	data := filepath.Join("..", "..", "sim", "testdata", "azure-conv")
	code, stdout, stderr := runCLI(t, "bench", "loki", "--seeds", "1", "--json", "--plot", plot, "--data", data)
	require.Equal(t, 0, code, stderr)
	var r struct {
		CapacityRatio      float64            `json:"capacity_ratio"`
		AccuracyAtCapacity float64            `json:"accuracy_at_capacity"`
		FullAccuracy       float64            `json:"full_accuracy"`
		Violations         map[string]float64 `json:"violations"`
		Busy               map[string]float64 `json:"busy_violations"`
		Capacity           map[string]struct {
			Median float64 `json:"median"`
		} `json:"capacity"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &r), stdout)
	require.GreaterOrEqual(t, r.CapacityRatio, 2.5)
	require.GreaterOrEqual(t, r.AccuracyAtCapacity, 0.87*r.FullAccuracy)
	require.Less(t, r.AccuracyAtCapacity, r.FullAccuracy, "accuracy scaling is what carries it")
	for _, sys := range []string{"gpuletd", "pipeline_unaware", "hardware_only"} {
		require.Contains(t, r.Violations, sys)
		require.Contains(t, r.Busy, sys)
		require.Positive(t, r.Capacity[sys].Median, sys)
	}
	require.Less(t, r.Violations["gpuletd"], 0.01)
	require.Less(t, r.Violations["gpuletd"], r.Violations["pipeline_unaware"])
	require.Greater(t, r.Violations["hardware_only"], 0.1, "at 2.5× its capacity hardware scaling alone drops much")
	st, err := os.Stat(plot)
	require.NoError(t, err)
	require.Positive(t, st.Size())
}
