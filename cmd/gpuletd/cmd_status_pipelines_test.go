package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWritePipelines: the pipelines table shows the accuracy a pipeline
// serves at and its scaling, and a line names the cheaper variants a step
// runs; a pipeline under hardware scaling gets no such line.
func TestWritePipelines(t *testing.T) {
	var ps []adminPipeline
	require.NoError(t, json.Unmarshal([]byte(`[
 {"name": "traffic", "slo_ms": 250, "steps": ["det", "cls"], "fanout": "objects", "ready": true, "rate": 120,
  "recent": {"requests": 10, "slo_attainment": 1, "p50_ms": 40, "p99_ms": 90},
  "scaling": {"scaling": "accuracy", "planned_accuracy": 0.91, "accuracy": 0.905, "served": 10,
   "mix": [[{"model": "det", "share": 1}], [{"model": "cls", "share": 0.6}, {"model": "cls-lite", "share": 0.4}]]}},
 {"name": "full", "slo_ms": 100, "steps": ["a"], "ready": true,
  "scaling": {"scaling": "hardware", "planned_accuracy": 1, "mix": [[{"model": "a", "share": 1}]]}}
]`), &ps))
	var b strings.Builder
	require.NoError(t, writePipelines(&b, ps))
	out := b.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, out)
	require.Equal(t, strings.Fields("PIPELINE STEPS SLO RATE ACCURACY ATTAIN P50 P99"), strings.Fields(lines[0]))
	require.Contains(t, lines[1], "90.5% (accuracy)")
	require.Contains(t, lines[2], "- (hardware)")
	require.Equal(t, "traffic: runs cheaper variants: step[1]: cls 60% + cls-lite 40%", lines[3])
}
