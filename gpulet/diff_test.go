package gpulet

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func let(size int, models ...Placement) GPULet { return GPULet{Size: size, Models: models} }

func pl(name string, batch int, rate float64) Placement {
	return Placement{Name: name, Batch: batch, Rate: rate}
}

func TestDiff(t *testing.T) {
	old := &Plan{GPUs: []GPUPlan{
		{ID: "g0", GPULets: []GPULet{let(60, pl("a", 8, 100)), let(40, pl("b", 4, 50))}},
		{ID: "g1", GPULets: []GPULet{let(100, pl("c", 16, 300), pl("d", 2, 10))}},
		{ID: "g2", GPULets: []GPULet{let(100, pl("e", 4, 10))}},
	}}
	next := &Plan{GPUs: []GPUPlan{
		{ID: "g0", GPULets: []GPULet{let(60, pl("a", 8, 100)), let(40, pl("b", 6, 80))}}, // keep, keep+retune
		{ID: "g1", GPULets: []GPULet{let(50, pl("d", 2, 10), pl("c", 8, 150)), let(50, pl("c", 8, 150))}},
		{ID: "g3", GPULets: []GPULet{let(100, pl("e", 4, 10))}},
	}}
	d := Diff(old, next)
	type key struct {
		a      Action
		gpu    string
		oi, ni int
		retune bool
	}
	var got []key
	for _, c := range d.Changes {
		got = append(got, key{c.Action, c.GPU, c.OldIndex, c.NewIndex, c.Retune})
	}
	require.Equal(t, []key{
		// g1: the {c,d} gpu-let shrinks to 50%: resize; a second c
		// gpu-let is new: start. g3 is a new GPU: start.
		{ActionResize, "g1", 0, 0, false},
		{ActionStart, "g1", -1, 1, false},
		{ActionStart, "g3", -1, 0, false},
		{ActionKeep, "g0", 0, 0, false},
		{ActionKeep, "g0", 1, 1, true},
		// g2 is gone from the new plan: stop after the switch.
		{ActionStop, "g2", 0, -1, false},
	}, got)
	require.Equal(t, 2, d.Count(ActionStart))
	require.Equal(t, 1, d.Count(ActionStop))

	require.Equal(t, len(next.GPUs[0].GPULets)+len(next.GPUs[1].GPULets)+1, Diff(nil, next).Count(ActionStart))
	require.Equal(t, 4, Diff(old, nil).Count(ActionStop))
	require.Equal(t, 4, Diff(old, old).Count(ActionKeep))
	require.Len(t, Diff(old, old).Changes, 4)
	require.True(t, Diff(old, old).Unchanged())
	require.False(t, d.Unchanged())
	require.True(t, Diff(nil, nil).Unchanged())
	var acted []Action
	for _, c := range d.Actions() {
		acted = append(acted, c.Action)
	}
	require.Equal(t, []Action{ActionResize, ActionStart, ActionStart, ActionKeep, ActionStop}, acted,
		"every change but g0's first gpu-let, kept as it was")
	require.Equal(t, 1, d.Actions()[3].NewIndex, "the kept gpu-let that is retuned")
	require.Empty(t, Diff(old, old).Actions())
}

// A move's steps in words, in the order a node takes them: starts and
// resizes, loads and retunes, stops, unloads. A new gpu-let is named by its
// GPU-LET in the plan's table, one that stops by its size and models.
func TestPlanDiffSteps(t *testing.T) {
	mig := let(43, pl("c", 2, 12))
	mig.MIGProfile = "3g.20gb"
	at := func(l GPULet) *GPULet { return &l }
	d := PlanDiff{Changes: []Change{
		{Action: ActionStart, GPU: "emu0", OldIndex: -1, NewIndex: 1, New: at(let(50, pl("b", 2, 12)))},
		{Action: ActionResize, GPU: "emu1", NewIndex: 0, Old: at(let(100, pl("c", 2, 12))), New: &mig},
		{Action: ActionKeep, GPU: "emu0", Old: at(let(100, pl("a", 2, 12), pl("e", 1, 1))), New: at(let(100, pl("a", 4, 12), pl("d", 1, 1))),
			Load: []string{"d"}, Unload: []string{"e"}, Retune: true},
		{Action: ActionKeep, GPU: "emu3", Old: at(let(100, pl("a", 2, 12))), New: at(let(100, pl("a", 2, 12)))},
		{Action: ActionStop, GPU: "emu2", NewIndex: -1, Old: at(let(100, pl("f", 1, 1), pl("g", 1, 1)))},
		{Action: ActionStop, GPU: "emu2", NewIndex: -1, Old: at(let(100))},
	}}
	require.Equal(t, []string{
		"start emu0 gpu-let 1 (50%) for b",
		"resize emu1 gpu-let 0 (43% 3g.20gb, was 100%) for c",
		"load d on emu0 gpu-let 0 (100%)",
		"retune emu0 gpu-let 0 (100%): other batches or rates",
		"stop emu2's 100% gpu-let of f, g",
		"stop emu2's 100% gpu-let of no model",
		"unload e from emu0 gpu-let 0 (100%)",
	}, d.Steps())
	require.Empty(t, PlanDiff{}.Steps())
}

func TestDiffMIGInstance(t *testing.T) {
	a := GPULet{Size: 43, MIGProfile: "3g.20gb", MIGStart: 0, Models: []Placement{pl("a", 4, 10)}}
	b := a
	b.MIGStart = 4
	d := Diff(&Plan{GPUs: []GPUPlan{{ID: "g", GPULets: []GPULet{a}}}}, &Plan{GPUs: []GPUPlan{{ID: "g", GPULets: []GPULet{b}}}})
	require.Equal(t, 1, d.Count(ActionResize), "another MIG instance is a new executor")
}

func TestWriteTable(t *testing.T) {
	in := splitWorkload(t)
	in.Demands[1].Rate = 1e5
	plan := runPlan(t, AlgoGpuletInt, in, Options{})
	var buf bytes.Buffer
	require.NoError(t, plan.WriteTable(&buf))
	out := buf.String()
	require.Contains(t, out, "NOT schedulable")
	require.Contains(t, out, "unscheduled b:")
	require.Contains(t, out, "WORST MS")
	for _, g := range plan.GPUs {
		require.Contains(t, out, g.ID)
	}
	for _, line := range strings.Split(out, "\n") {
		require.Equal(t, strings.TrimRight(line, " "), line, "no line ends in the last column's padding")
	}
}

func TestDiffKeepsSizeAndSwapsModels(t *testing.T) {
	tests := []struct {
		name         string
		old, next    []GPULet
		action       Action
		load, unload []string
		retune       bool
	}{
		{name: "most models in common wins", old: []GPULet{let(50, pl("x", 2, 5)), let(50, pl("a", 4, 10), pl("b", 2, 5))},
			next: []GPULet{let(50, pl("a", 4, 10), pl("c", 2, 5))}, action: ActionKeep, load: []string{"c"}, unload: []string{"b"}},
		{name: "same size no model in common is still kept", old: []GPULet{let(40, pl("a", 4, 10))},
			next: []GPULet{let(40, pl("b", 4, 10))}, action: ActionKeep, load: []string{"b"}, unload: []string{"a"}},
		{name: "a factor change retunes", old: []GPULet{let(40, Placement{Name: "a", Batch: 4, Rate: 10, Factor: 1})},
			next: []GPULet{let(40, Placement{Name: "a", Batch: 4, Rate: 10, Factor: 1.2})}, action: ActionKeep, retune: true},
		{name: "another size starts", old: []GPULet{let(40, pl("a", 4, 10))},
			next: []GPULet{let(60, pl("a", 4, 10), pl("b", 1, 1))}, action: ActionStart},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Diff(&Plan{GPUs: []GPUPlan{{ID: "g", GPULets: tc.old}}}, &Plan{GPUs: []GPUPlan{{ID: "g", GPULets: tc.next}}})
			require.Equal(t, tc.action, d.Changes[0].Action)
			require.Equal(t, tc.load, d.Changes[0].Load)
			require.Equal(t, tc.unload, d.Changes[0].Unload)
			require.Equal(t, tc.retune, d.Changes[0].Retune)
			require.False(t, d.Unchanged())
		})
	}
}
