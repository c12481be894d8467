package sim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteTemporal(t *testing.T) {
	r := &TemporalResult{Set: "igniter-v100", Seeds: []uint64{1, 2, 3}, BatchCap: true, Rows: []TemporalRow{{
		Mix:     "game",
		Planned: map[string]float64{"gpulet-int": 1000, "sbp": 900, "ideal": 1100},
		Shape:   map[string]string{"gpulet-int": "gpu0: 40%[a] 60%[b]", "sbp": "gpu0: 100%[a b]", "ideal": "gpu0: 100%[a b]"},
		Served:  map[string]float64{"gpulet-int": 980, "gpulet": 700, "sbp": 880, "sbp-eager": 800},
		Spread: map[string]Spread{
			"gpulet-int": SpreadOf([]float64{970, 980, 990}), "gpulet": SpreadOf([]float64{700, 700, 700}),
			"sbp": SpreadOf([]float64{880, 870, 890}), "sbp-eager": SpreadOf([]float64{800, 790, 810}),
		},
	}}}
	var b strings.Builder
	require.NoError(t, WriteTemporal(&b, r))
	out := b.String()
	require.Contains(t, out, "seeds [1 2 3], batches on shared gpu-lets capped at the plan's")
	require.Contains(t, out, "| game ")
	require.Contains(t, out, "980 [970–990]")
	require.Contains(t, out, "| 0.980 ", "served over planned")
	require.Contains(t, out, "| 1.225 ", "gpulet-int over sbp-eager")
	require.Contains(t, out, "game gpulet-int: gpu0: 40%[a] 60%[b]")
	require.InDelta(t, 980.0/880, TemporalRatio(r, "sbp"), 1e-12)
	require.Zero(t, TemporalRatio(&TemporalResult{}, "sbp"))

	// Systems left out (--system) print as not run, not as zero.
	delete(r.Rows[0].Served, "sbp-eager")
	delete(r.Rows[0].Spread, "sbp-eager")
	b.Reset()
	require.NoError(t, WriteTemporal(&b, r))
	require.Contains(t, b.String(), "| 880 [870–890] | —                | 0.980                | —                      |")
}

func TestGpuletVsTemporalUnknownNames(t *testing.T) {
	_, err := RunGpuletVsTemporal(t.Context(), TemporalOptions{Mixes: []string{"nope"}})
	require.ErrorIs(t, err, ErrBadOptions)
	require.ErrorContains(t, err, `unknown mix "nope" (known: equal, long-only, short-skew, game, traffic)`)
	_, err = RunGpuletVsTemporal(t.Context(), TemporalOptions{Systems: []string{"triton"}})
	require.ErrorContains(t, err, `unknown system "triton"`)
}
