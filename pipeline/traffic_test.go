package pipeline

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTrafficAccuracyScaling checks Loki's effect on its own profiles and
// accuracies: on 8 workers, accuracy scaling carries at least 2.5× the
// demand of hardware scaling alone at 0.87 of full accuracy or better (Loki
// §1: 2.7× at a 13% accuracy cost), lowers the classifier's accuracy
// before the detector's, and goes back to full accuracy as demand falls.
func TestTrafficAccuracyScaling(t *testing.T) {
	p := lokiTraffic(t)
	opts := Options{Workers: 8}
	full := MaxDemand(p, Options{Workers: 8, FullAccuracyOnly: true})
	require.Greater(t, full, 0.0)

	at := func(d float64) Plan {
		pl, err := PlanFor(p, d, opts)
		require.NoError(t, err)
		return pl
	}
	high := at(2.5 * full)
	require.Equal(t, AccuracyScaling, high.Scaling)
	require.GreaterOrEqual(t, high.Accuracy, 0.87*p.FullAccuracy())
	require.GreaterOrEqual(t, MaxDemand(p, opts), 2.5*full)

	// Just above full capacity only the classifier gives up accuracy.
	mid := at(1.5 * full)
	require.Equal(t, AccuracyScaling, mid.Scaling)
	require.Equal(t, []string{"yolov5x"}, variantNames(mid.Tasks[0]))
	require.Less(t, taskAccuracy(p, 1, mid.Tasks[1]), p.Tasks[1].Variants[p.Tasks[1].bestVariant()].Accuracy)

	// Back below: full accuracy, on fewer workers as demand falls.
	low := at(0.5 * full)
	require.Equal(t, HardwareScaling, low.Scaling)
	require.InDelta(t, p.FullAccuracy(), low.Accuracy, 1e-12)
	require.Less(t, low.Workers, opts.Workers)
	require.Less(t, at(0.1*full).Workers, low.Workers)
}

func variantNames(tp TaskPlan) []string {
	var out []string
	for _, v := range tp.Variants {
		out = append(out, v.Variant)
	}
	return out
}

// taskAccuracy is the mean accuracy of task i's variants in the plan,
// weighted by their shares.
func taskAccuracy(p *Pipeline, i int, tp TaskPlan) float64 {
	var a float64
	for _, v := range tp.Variants {
		for _, pv := range p.Tasks[i].Variants {
			if pv.Name == v.Variant {
				a += v.Share * pv.Accuracy
			}
		}
	}
	return a
}
