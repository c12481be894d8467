package control

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
)

func TestFold(t *testing.T) {
	var e Estimate
	require.Equal(t, 100.0, e.Fold(100, 0.5), "the first period as it is")
	require.Equal(t, 150.0, e.Fold(200, 0.5))
	require.Equal(t, 160.0, e.Fold(200, 0.2))
	require.Equal(t, 3, e.Periods)
}

func TestSurge(t *testing.T) {
	for _, tc := range []struct {
		name            string
		short, assigned map[string]float64
		early           map[string]bool
		want            string
	}{
		{"none", map[string]float64{"a": 10}, map[string]float64{"a": 10}, nil, ""},
		{"above 1.25x", map[string]float64{"a": 1300}, map[string]float64{"a": 1000}, nil, "rate of a surged"},
		{"at 1.25x is not", map[string]float64{"a": 1250}, map[string]float64{"a": 1000}, nil, ""},
		// A second of 32 req/s planned holds 32 ± 5.7: 1.25× is chance,
		// two and a half deviations (46.1) are not.
		{"within chance at a low rate", map[string]float64{"a": 45}, map[string]float64{"a": 32}, nil, ""},
		{"beyond chance at a low rate", map[string]float64{"a": 47}, map[string]float64{"a": 32}, nil, "rate of a surged"},
		{"a model planned at the minimum", map[string]float64{"a": 6}, map[string]float64{"a": 1.2}, nil, "rate of a surged"},
		{"tiny rates are ignored", map[string]float64{"a": 5}, map[string]float64{}, nil, ""},
		{"unplaced model", map[string]float64{"b": 6}, map[string]float64{}, nil, "rate of b surged"},
		{"first by name", map[string]float64{"z": 100, "c": 100}, map[string]float64{}, nil, "rate of c surged"},
		{"a model not judged yet", map[string]float64{"z": 100, "c": 100}, map[string]float64{}, map[string]bool{"c": true}, "rate of z surged"},
		{"none judged yet", map[string]float64{"c": 100}, map[string]float64{}, map[string]bool{"c": true}, ""},
	} {
		require.Equal(t, tc.want, Surge(tc.short, tc.assigned, tc.early), tc.name)
	}
	require.Equal(t, map[string]float64{"a": 20, "b": 7}, MaxRates(map[string]float64{"a": 10, "b": 7}, map[string]float64{"a": 20, "b": 3}))
}

func TestWindowOpensWhereTheLastClosed(t *testing.T) {
	var w Window // opened at 0
	require.InDelta(t, 1.0, w.Close(time.Second), 1e-12)
	require.Zero(t, w.Close(time.Second), "no time has passed: the window stays open")
	require.InDelta(t, 0.5, w.Close(1500*time.Millisecond), 1e-12)
	require.Zero(t, w.Close(time.Second), "a clock that went back closes nothing")
	require.InDelta(t, 0.5, w.Close(2*time.Second), 1e-12, "the window opened at the last close, 1.5 s")
	late := OpenWindow(10 * time.Second)
	require.InDelta(t, 0.25, late.Close(10250*time.Millisecond), 1e-12)
}

// A steady Poisson load at the rate the plan was made for (its estimate
// plus the headroom) seldom reads as a surge, also at a few requests a
// second, while a load that has doubled does within a few windows (at 8
// req/s one in four reads as one, from 27 req/s most).
func TestSurgeIsNotPoissonNoise(t *testing.T) {
	poisson := poissonCounts(rand.New(rand.NewPCG(1, 2)))
	const windows = 20000
	for _, rate := range []float64{8, 27, 100, 400} {
		planned := PlanRate(rate, Headroom)
		steady, doubled := 0, 0
		for range windows {
			if Surge(map[string]float64{"m": poisson(rate)}, map[string]float64{"m": planned}, nil) != "" {
				steady++
			}
			if Surge(map[string]float64{"m": poisson(2 * rate)}, map[string]float64{"m": planned}, nil) != "" {
				doubled++
			}
		}
		require.Less(t, float64(steady)/windows, 0.004, "steady at %v req/s", rate)
		require.Greater(t, float64(doubled)/windows, 0.2, "doubled from %v req/s", rate)
		if rate >= 27 {
			require.Greater(t, float64(doubled)/windows, 0.5, "doubled from %v req/s", rate)
		}
	}
}

// A plan near the node's capacity gives a model less headroom than asked,
// down to none: what it assigns is then the estimate itself. A steady
// Poisson load at that estimate seldom reads as a surge all the same
// (judged against the estimate with its headroom, SurgeBase), while one
// that has doubled still does.
func TestSurgeOverAPlanWithoutHeadroom(t *testing.T) {
	poisson := poissonCounts(rand.New(rand.NewPCG(3, 4)))
	const windows = 20000
	for _, rate := range []float64{8, 27, 100} {
		plan := &gpulet.Plan{GPUs: []gpulet.GPUPlan{{ID: "g0", GPULets: []gpulet.GPULet{{Size: 100,
			Models: []gpulet.Placement{{Name: "m", Rate: rate, Batch: 4}}}}}}}
		estimates := map[string]float64{"m": rate}
		steady, doubled, planned := 0, 0, 0
		for range windows {
			check := func(count float64) bool {
				why, _ := SurgeReplan(SurgeInput{Now: time.Hour, Plan: plan, Headroom: Headroom,
					Short: Short{Rates: map[string]float64{"m": count}}, Estimates: estimates, Folded: estimates})
				return why != ""
			}
			if check(poisson(rate)) {
				steady++
			}
			if check(poisson(2 * rate)) {
				doubled++
			}
			if Surge(map[string]float64{"m": poisson(rate)}, PlannedFor(plan), nil) != "" {
				planned++
			}
		}
		require.Less(t, float64(steady)/windows, 0.004, "steady at %v req/s", rate)
		require.Greater(t, float64(doubled)/windows, 0.2, "doubled from %v req/s", rate)
		if rate >= 27 {
			require.Greater(t, float64(planned)/windows, 0.004, "judged against what the plan assigns, at %v req/s", rate)
		}
	}
}

// Against an idle node's spread plan, whose rates are each model's whole
// share, a load that would need more than its share with the headroom is
// a surge; one well within its share is not, nor a steady load the periods
// have measured.
func TestSurgeOverASpreadPlan(t *testing.T) {
	spread := &gpulet.Plan{Spread: true, GPUs: []gpulet.GPUPlan{{ID: "g0", GPULets: []gpulet.GPULet{{Size: 50,
		Models: []gpulet.Placement{{Name: "m", Rate: 2417, Batch: 6}}}}}}}
	for _, tc := range []struct {
		name   string
		rate   float64
		folded map[string]float64
		surged bool
	}{
		{"a load begins within its share", 1200, nil, false},
		{"a load driven to the share's edge", 2389, nil, true},
		{"past the share with the headroom", 2100, nil, true},
		{"a steady load the periods measured", 2100, map[string]float64{"m": 2000}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why, _ := SurgeReplan(SurgeInput{Now: time.Hour, Plan: spread, Headroom: Headroom,
				Short: Short{Rates: map[string]float64{"m": tc.rate}}, Folded: tc.folded})
			require.Equal(t, tc.surged, why != "", why)
		})
	}
}

// poissonCounts draws Poisson counts of a given mean from rng (Knuth's
// method: fine at these means).
func poissonCounts(rng *rand.Rand) func(mean float64) float64 {
	return func(mean float64) float64 {
		l, k, p := math.Exp(-mean), 0, 1.0
		for {
			p *= rng.Float64()
			if p <= l {
				return float64(k)
			}
			k++
		}
	}
}
