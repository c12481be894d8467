package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
)

func TestParseRates(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pairs []string
		want  map[string]float64
		err   string
	}{
		{"none", nil, map[string]float64{}, ""},
		{"two", []string{"resnet50=300", " ssd = 40.5"}, map[string]float64{"resnet50": 300, "ssd": 40.5}, ""},
		{"no rate", []string{"resnet50"}, nil, `plan: --rate "resnet50": want MODEL=REQ/S, as resnet50=300`},
		{"no name", []string{"=3"}, nil, `plan: --rate "=3": want MODEL=REQ/S`},
		{"negative", []string{"a=-1"}, nil, `plan: --rate a: "-1" is not a rate`},
		{"not a number", []string{"a=fast"}, nil, `plan: --rate a: "fast" is not a rate`},
		{"infinite", []string{"a=Inf"}, nil, `plan: --rate a: "Inf" is not a rate`},
		{"twice", []string{"a=1", "a=2"}, nil, "plan: --rate gives a twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseRates(tc.pairs)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// The preview's words: the rates with where each comes from and the
// headroom the plan gives, then the steps in the order they apply.
func TestWritePlanPreview(t *testing.T) {
	plan := &gpulet.Plan{Algo: gpulet.AlgoGpuletInt, Schedulable: true, GPUs: []gpulet.GPUPlan{
		{ID: "emu0", GPULets: []gpulet.GPULet{{Size: 50, Models: []gpulet.Placement{{Name: "a", Batch: 2, Rate: 12}}}}},
	}}
	doc := planPreview{Plan: plan, Headroom: 0.2, HeadroomPlaced: 0.15, MinRate: 1,
		Rates:      map[string]float64{"a": 10, "b": 0, "c": 2.5},
		Unprofiled: map[string]string{"d": "no profile of d on v100 yet"},
		Steps:      []string{"start emu0 gpu-let 1 (50%) for b", "stop emu2's 100% gpu-let of f, g"},
		Capacity:   &adminCapacity{Ratio: 1.5, Load: 12.5, Rate: 18.75},
		Notes:      []string{"on emu2 what starts and loads does not fit beside what runs there: it waits for the old gpu-lets to drain"},
	}
	var b bytes.Buffer
	require.NoError(t, doc.write(&b, map[string]float64{"a": 10}))
	require.Contains(t, b.String(), `for a 10 req/s asked, b 0 req/s estimated, c 2.5 req/s estimated; each at least
  1 req/s, with 15.0% headroom (the 20% planned for does not fit)
capacity (planner's estimate): 1.5× the 12.5 req/s planned for, 18.8 req/s
not planned d: no profile of d on v100 yet
applying it would, in this order:
  start emu0 gpu-let 1 (50%) for b
  stop emu2's 100% gpu-let of f, g
on emu2 what starts and loads does not fit beside what runs there: it waits for
  the old gpu-lets to drain
`)

	doc.Steps, doc.Unchanged, doc.HeadroomPlaced = nil, true, 0.2
	b.Reset()
	require.NoError(t, doc.write(&b, nil))
	require.Contains(t, b.String(), "each at\n  least 1 req/s, with 20% headroom\n")
	require.Contains(t, b.String(), "\nwhat runs is this plan: applying it changes nothing\n")

	doc.HeadroomPlaced = -0.4
	b.Reset()
	require.NoError(t, doc.write(&b, nil))
	require.Contains(t, b.String(), "placed short of them (unscheduled above)")

	// An idle node's plan: its rates are room, given alike.
	doc.Rates, doc.Plan.Spread = map[string]float64{"a": 0, "b": 0}, true
	b.Reset()
	require.NoError(t, doc.write(&b, nil))
	require.Contains(t, b.String(), "for a 0 req/s estimated, b 0 req/s estimated; planned for no traffic: each model\n  has an equal share of the GPUs' time")
	require.NotContains(t, b.String(), "headroom")
}
