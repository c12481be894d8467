package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBenchLokiPlan(t *testing.T) {
	code, stdout, stderr := runCLI(t, "bench", "loki-plan", "--json")
	require.Equal(t, 0, code, stderr)
	var r struct {
		Workers              int     `json:"workers"`
		FullAccuracyMax      float64 `json:"full_accuracy_max"`
		PlannedCapacityRatio float64 `json:"planned_capacity_ratio"`
		Points               []struct {
			Factor           float64 `json:"factor"`
			RelativeAccuracy float64 `json:"relative_accuracy"`
			Overloaded       bool    `json:"overloaded"`
			Plan             struct {
				Scaling string `json:"scaling"`
				Workers int    `json:"workers"`
			} `json:"plan"`
		} `json:"points"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &r))
	require.Equal(t, 8, r.Workers)
	require.Greater(t, r.FullAccuracyMax, 0.0)
	require.GreaterOrEqual(t, r.PlannedCapacityRatio, 2.5)
	require.Len(t, r.Points, len(lokiPlanFactors))
	for _, pt := range r.Points {
		if pt.Factor <= 1 {
			require.Equal(t, "hardware", pt.Plan.Scaling, "factor %v", pt.Factor)
			require.InDelta(t, 1, pt.RelativeAccuracy, 1e-9)
		} else {
			require.Equal(t, "accuracy", pt.Plan.Scaling, "factor %v", pt.Factor)
			require.Less(t, pt.RelativeAccuracy, 1.0)
		}
		require.False(t, pt.Overloaded)
		require.LessOrEqual(t, pt.Plan.Workers, 8)
	}

	code, stdout, stderr = runCLI(t, "bench", "loki-plan", "--workers", "3")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "traffic-analysis on 3 workers")
	code, _, stderr = runCLI(t, "bench", "loki-plan", "--workers", "1")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "1 workers for 2 tasks")
}
