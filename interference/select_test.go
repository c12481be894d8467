package interference

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// launchTruth follows the "launch" candidate's form exactly.
func launchTruth(s Sample) float64 {
	return 1.1 + 0.0015*s.Self.Batch1MS/s.Self.SoloMS*s.Other.Util.DRAM - 0.02*math.Log(s.Self.SoloMS)*s.Other.Batch1MS/s.Other.SoloMS
}

func TestSelectPicksTheTrueForm(t *testing.T) {
	samples := synthSamples(150, 21, launchTruth)
	sel, err := Select(samples, Candidates(), DefaultSeed)
	require.NoError(t, err)
	best := sel.Best()
	require.Equal(t, "launch", best.Spec.Name)
	require.InDelta(t, 0, best.LOMO.P95, 1e-9)
	require.InDelta(t, 0, best.Random.P95, 1e-9)
	// Synthetic serial shares are constant (solo/4): those candidates are
	// singular here and must be reported as skipped, at the end.
	s, ok := sel.Find("serial")
	require.True(t, ok)
	require.Contains(t, s.Skipped, "constant")
	require.NotEmpty(t, sel.Results[len(sel.Results)-1].Skipped)
	for i := 1; i < len(sel.Results); i++ {
		if sel.Results[i].Skipped == "" {
			require.LessOrEqual(t, sel.Results[i-1].Score(), sel.Results[i].Score())
		}
	}

	m, _, err := Train(samples, Candidates(), DefaultSeed)
	require.NoError(t, err)
	require.Equal(t, "launch", m.Name)
	require.Equal(t, best.LOMO, m.Stats.HeldOut[SplitLOMO])
	require.Equal(t, best.Random, m.Stats.HeldOut[SplitRandom])
}

func TestSelectWithoutUsableCandidate(t *testing.T) {
	samples := synthSamples(30, 1, paperFactor)
	_, err := Select(samples, []Spec{{Name: "sm", Features: []string{"sm_self", Const}, Target: TargetFactor}}, 1)
	require.ErrorIs(t, err, ErrNoCandidate)
}

func TestBenchJSONShape(t *testing.T) {
	samples := synthSamples(150, 4, launchTruth)
	rep, err := Bench(samples, DefaultSeed)
	require.NoError(t, err)
	require.Equal(t, "launch", rep.Best.Name)
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	var doc map[string]map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &doc))
	require.Len(t, doc, 2)
	require.ElementsMatch(t, []string{"lomo", "random"}, keys(doc["paper"]))
	require.ElementsMatch(t, []string{"name", "lomo", "random"}, keys(doc["best"]))
	var q map[string]float64
	require.NoError(t, json.Unmarshal(doc["paper"]["lomo"], &q))
	require.ElementsMatch(t, []string{"p50", "p90", "p95"}, keys(q))
	require.Greater(t, q["p90"], 0.0, "the paper's form cannot fit launch-form data exactly")
}

func TestNestedLOMO(t *testing.T) {
	samples := synthSamples(150, 6, launchTruth)
	errs, chosen, err := NestedLOMO(samples, Candidates(), DefaultSeed)
	require.NoError(t, err)
	require.Len(t, errs, 2*len(samples))
	require.Len(t, chosen, 4)
	require.InDelta(t, 0, errs.Quantile(0.95), 1e-9, "the true form is found without the held-out model")
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
