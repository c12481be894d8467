package sim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The summary has a row per model, and no line ends in the spaces a
// table's last column would pad it with (they show in a terminal's
// selection and in pasted reports).
func TestWriteSummary(t *testing.T) {
	r := &Result{Policy: "deferred", Algo: "gpulet-int", Seed: 1, DurationS: 5, Requests: 30, Models: []ModelResult{
		{Name: "resnet50", SLOMS: 95, Requests: 20, SLOAttainment: 1, P50MS: 9.5, P99MS: 20, MeanBatch: 4},
		{Name: "a-model-with-a-long-name", SLOMS: 5, Requests: 10, SLOAttainment: 0.9, Late: 1, P50MS: 1, P99MS: 6, MeanBatch: 1.5},
	}}
	var b strings.Builder
	require.NoError(t, r.WriteSummary(&b))
	out := b.String()
	require.Contains(t, out, "resnet50")
	require.Contains(t, out, "90.000%")
	for _, line := range strings.Split(out, "\n") {
		require.Equal(t, strings.TrimRight(line, " "), line)
	}
}
