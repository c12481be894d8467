package control

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
)

// missStep is one surge check of the miss rule: the plan in force, whether
// it runs whole, model a's counts, and what the check should answer.
type missStep struct {
	plan     *gpulet.Plan
	settled  bool
	answered uint64
	missed   uint64
	fires    bool
}

// missEstimates are rates whose plan with the headroom and one MissStep
// asks more than keepPlan assigns a (120 req/s) and b (60).
var missEstimates = map[string]float64{"a": 100, "b": 50}

// check is a miss check long after the last re-plan.
func check(m *Misses, plan *gpulet.Plan, tallies map[string]Tally) string {
	return m.Check(MissInput{Now: time.Hour, Plan: plan, Settled: true, Tallies: tallies, Estimates: missEstimates, Headroom: Headroom})
}

func TestMissesCheck(t *testing.T) {
	plan, other := keepPlan(), keepPlan()
	held := keepPlan()
	held.Unscheduled = map[string]float64{"a": 30}
	for _, tc := range []struct {
		name  string
		steps []missStep
		extra float64
	}{
		{"counting starts at the first settled check", []missStep{
			{plan, true, 1000, 500, false},
		}, 0},
		{"over the fraction and the minimum", []missStep{
			{plan, true, 1000, 500, false}, {plan, true, 2000, 525, true},
		}, MissStep},
		{"at the fraction", []missStep{
			{plan, true, 0, 0, false}, {plan, true, 2500, 25, false},
		}, 0},
		{"under the minimum", []missStep{
			{plan, true, 0, 0, false}, {plan, true, 100, 19, false},
		}, 0},
		{"misses while a reorganization runs are not the plan's", []missStep{
			{plan, true, 0, 0, false}, {plan, false, 100, 50, false}, {plan, true, 100, 50, false}, {plan, true, 200, 60, false},
		}, 0},
		{"a new plan counts afresh", []missStep{
			{plan, true, 0, 0, false}, {other, true, 100, 50, false}, {other, true, 1100, 75, true},
		}, MissStep},
		{"a re-plan's plan counts afresh", []missStep{
			{plan, true, 0, 0, false}, {plan, true, 100, 50, true}, {plan, true, 200, 60, false},
			{plan, true, 300, 80, true},
		}, 2 * MissStep},
		{"a model held back at overload misses for want of share, not room", []missStep{
			{held, true, 0, 0, false}, {held, true, 100, 50, false},
		}, 0},
		{"at most MissMax", []missStep{
			{plan, true, 0, 0, false}, {plan, true, 100, 50, true},
			{plan, true, 100, 50, false}, {plan, true, 200, 100, true},
			{plan, true, 200, 100, false}, {plan, true, 300, 150, true},
			{plan, true, 300, 150, false}, {plan, true, 400, 200, true},
			{plan, true, 400, 200, false}, {plan, true, 500, 250, false},
		}, MissMax},
		{"no plan", []missStep{{nil, true, 0, 0, false}, {nil, true, 100, 50, false}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Misses
			for i, s := range tc.steps {
				why := m.Check(MissInput{Now: time.Hour, Plan: s.plan, Settled: s.settled,
					Tallies:   map[string]Tally{"a": {Answered: s.answered, Missed: s.missed}, "b": {Answered: s.answered}},
					Estimates: missEstimates, Headroom: Headroom})
				require.Equal(t, s.fires, why != "", "step %d: %q", i, why)
			}
			require.InDelta(t, tc.extra, m.Room(Headroom).Extra["a"], 1e-12)
			require.Zero(t, m.Room(Headroom).Extra["b"], "b never missed")
		})
	}
}

// Counting starts at the first settled check even within MinReplanGap of
// the last re-plan, which holds the re-plan itself back.
func TestMissesCheckWaitsForTheGap(t *testing.T) {
	var m Misses
	plan := keepPlan()
	at := func(now time.Duration, missed uint64) string {
		return m.Check(MissInput{Now: now, LastPlan: 10 * time.Second, Plan: plan, Settled: true,
			Tallies: map[string]Tally{"a": {Answered: 10 * missed, Missed: missed}}, Estimates: missEstimates, Headroom: Headroom})
	}
	require.Empty(t, at(11*time.Second, 0), "counting starts a second after the re-plan")
	require.Empty(t, at(12*time.Second, 30), "too soon to re-plan")
	require.NotEmpty(t, at(15*time.Second, 30), "30 missed since 11 s")
}

// The reason names the model, its counts since the plan settled and the
// room it is given.
func TestMissesCheckSaysWhy(t *testing.T) {
	var m Misses
	plan := keepPlan()
	require.Empty(t, check(&m, plan, map[string]Tally{"a": {Answered: 40, Missed: 2}}))
	why := check(&m, plan, map[string]Tally{"a": {Answered: 503, Missed: 25}})
	require.Equal(t, "a missed its SLO 23 times in 463 (5.0%) on the plan in force; planned with 25% more headroom", why)
}

// A model whose plan in force assigns it what the re-plan would give it,
// and more (a spread plan's whole gpu-let), is not re-planned for its
// misses: the re-plan could only hand it less. One assigned less is.
func TestMissesCheckLeavesAModelWithMoreRoom(t *testing.T) {
	for _, tc := range []struct {
		name     string
		estimate float64
		extra    float64 // already given
		fires    bool
	}{
		{"the re-plan would give more", 100, 0, true},          // 100 × 1.45 > 120
		{"the plan in force gives more", 60, 0, false},         // 60 × 1.45 < 120
		{"a little more than the re-plan would", 82, 0, false}, // 82 × 1.45 = 118.9
		{"more once its extra is raised", 60, 0.75, true},      // 60 × 2.2 > 120
		{"no estimate: the least rate planned", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Misses{extra: map[string]float64{}}
			if tc.extra > 0 {
				m.extra["a"] = tc.extra
			}
			plan := keepPlan()
			in := MissInput{Now: time.Hour, Plan: plan, Settled: true, Headroom: Headroom,
				Estimates: map[string]float64{"a": tc.estimate}}
			in.Tallies = map[string]Tally{"a": {}}
			require.Empty(t, m.Check(in))
			in.Tallies = map[string]Tally{"a": {Answered: 1000, Missed: 100}}
			require.Equal(t, tc.fires, m.Check(in) != "")
			want := tc.extra
			if tc.fires {
				want += MissStep
			}
			require.InDelta(t, want, m.Room(Headroom).Extra["a"], 1e-12)
		})
	}
}

// A period under the rule fades a model's extra headroom, one that breaks
// it keeps it, and what is left of a few clean periods is dropped.
func TestMissesPeriodFades(t *testing.T) {
	var m Misses
	plan := keepPlan()
	check(&m, plan, map[string]Tally{"a": {}})
	require.NotEmpty(t, check(&m, plan, map[string]Tally{"a": {Answered: 100, Missed: 50}}))
	m.Period(map[string]Tally{"a": {Answered: 100, Missed: 50}})
	require.InDelta(t, MissStep, m.Room(Headroom).Extra["a"], 1e-12, "the period it missed in")
	m.Period(map[string]Tally{"a": {Answered: 1100, Missed: 55}})
	require.InDelta(t, MissStep*MissFade, m.Room(Headroom).Extra["a"], 1e-12)
	for range 20 {
		m.Period(map[string]Tally{"a": {Answered: 1100, Missed: 55}})
	}
	require.NotContains(t, m.Room(Headroom).Extra, "a")
	require.Equal(t, Room{Base: Headroom}, m.Room(Headroom))
}

// Counters that start anew (a daemon's model removed and added again)
// count nothing until they pass where they were.
func TestMissesCountersStartedAnew(t *testing.T) {
	var m Misses
	plan := keepPlan()
	check(&m, plan, map[string]Tally{"a": {Answered: 5000, Missed: 100}})
	require.Empty(t, check(&m, plan, map[string]Tally{"a": {Answered: 100, Missed: 50}}))
}

// A model's extra headroom is planned over the base, and shrinks with it
// near the node's capacity.
func TestPlanGivesTheExtraRoom(t *testing.T) {
	prof := wholeGPUProfiles(t) // 1000 req/s at most with a 20 ms SLO
	for _, tc := range []struct {
		name              string
		estimate, extra   float64
		planned           float64
		withoutTheExtraOf float64
	}{
		{"the full headroom and the extra fit", 500, MissStep, 500 * (1 + Headroom + MissStep), 500 * (1 + Headroom)},
		// The base headroom bisected over [0, 0.2] in three steps: 0.125,
		// the largest found at which 750·(1 + 0.125·(1 + 0.25/0.2)) fits.
		{"near capacity both shrink", 750, MissStep, 750 * (1 + 0.125*(1+MissStep/Headroom)), 750 * (1 + Headroom)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := gpulet.Input{
				GPUs:    []gpulet.GPU{{ID: "g0", Type: "t", MemoryMB: 1000, Backend: gpulet.BackendNone}},
				Demands: []gpulet.Demand{{Name: "m", Profile: prof("m"), SLOMS: 20, Rate: tc.estimate}},
			}
			p, err := Plan(context.Background(), gpulet.AlgoSBP, in, gpulet.Options{}, Room{Base: Headroom, Extra: map[string]float64{"m": tc.extra}})
			require.NoError(t, err)
			require.InDelta(t, tc.planned, p.Assigned()["m"], 1e-6*tc.planned)
			p, err = Plan(context.Background(), gpulet.AlgoSBP, in, gpulet.Options{}, Room{Base: Headroom, Extra: map[string]float64{"other": tc.extra}})
			require.NoError(t, err)
			require.InDelta(t, tc.withoutTheExtraOf, p.Assigned()["m"], 1e-6*tc.planned)
		})
	}
}
