package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
)

func TestRecordOutcome(t *testing.T) {
	let := gpulet.GPULet{Size: 50, Models: []gpulet.Placement{{Name: "a", Batch: 4, Rate: 10}, {Name: "b", Batch: 2, Rate: 5}}}
	plan := &gpulet.Plan{GPUs: []gpulet.GPUPlan{{ID: "cpu", GPULets: []gpulet.GPULet{let}}}}
	tests := []struct {
		name     string
		out      control.Outcome[*gpuletRun]
		unserved map[string]string
		kinds    []string
		reorgs   int64
		reason   string // "period" when empty
		says     string // an event's message, when given
		counts   string // the plan-applied event's started, retired and loaded, when given
		starts   string // gpu-lets started beside, after the drain and over the old ones
	}{
		{name: "nothing changed", out: control.Outcome[*gpuletRun]{Diff: gpulet.Diff(plan, plan)}, starts: "0 0 0"},
		{name: "a gpu-let that did not start", out: control.Outcome[*gpuletRun]{Started: 1, Stopped: 2,
			Failed: []control.Failure{{GPU: "cpu", Let: let, Err: errors.New("no cores left")}}},
			unserved: map[string]string{"a": "its gpu-let on cpu did not start: no cores left", "b": "its gpu-let on cpu did not start: no cores left"},
			kinds:    []string{EventReorganize}, reorgs: 1, starts: "1 0 0"},
		{name: "the first plan is no reorganization", out: control.Outcome[*gpuletRun]{Started: 1},
			kinds: []string{EventReorganize}, reorgs: 0, reason: planAtStart, starts: "1 0 0"},
		{name: "a gpu-let started over the old", out: control.Outcome[*gpuletRun]{Started: 2, Stopped: 1, Overlapped: 1},
			kinds: []string{EventReorganize, EventReorganize}, reorgs: 1, starts: "1 0 1"},
		{name: "a model loaded once an old gpu-let had drained", out: control.Outcome[*gpuletRun]{Started: 1, Loaded: 1, Stopped: 2, Bridged: 1, Reloaded: 1},
			kinds: []string{EventReorganize, EventReorganize}, reorgs: 1,
			says:   "1 model(s) did not load on their gpu-let while old gpu-lets ran (memory they held): loaded once those had drained, 1 old gpu-let(s) serving them until then",
			counts: "1 2 1"},
		{name: "a model that did not load", out: control.Outcome[*gpuletRun]{Loaded: 0, Deferred: 1,
			Failed: []control.Failure{{GPU: "cpu", Let: let, Model: "b", Err: errors.New("corrupt model")}}},
			unserved: map[string]string{"b": "loading it on cpu failed: corrupt model"},
			kinds:    []string{EventReorganize, EventReorganize}, reorgs: 1, starts: "0 1 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			n := &node{log: zap.NewNop(), events: newEvents(st, zap.NewNop())}
			reason := cmp.Or(tc.reason, "period")
			n.recordOutcome(tc.out, plan, reason)
			got := n.unserved.all()
			require.Len(t, got, len(tc.unserved))
			for name, why := range tc.unserved {
				require.Equal(t, why, got[name])
			}
			evs, err := st.Events(context.Background(), 0, 10)
			require.NoError(t, err)
			var kinds, said []string
			counts := ""
			for _, e := range evs {
				kinds = append(kinds, e.Kind)
				said = append(said, e.Message)
				if strings.HasPrefix(e.Message, "plan applied: ") {
					counts = e.Attrs["started"] + " " + e.Attrs["retired"] + " " + e.Attrs["loaded"]
				}
			}
			if tc.counts != "" {
				require.Equal(t, tc.counts, counts)
			}
			require.Equal(t, tc.kinds, kinds)
			if tc.says != "" {
				require.Contains(t, said, tc.says)
			}
			require.Equal(t, tc.reorgs, n.reorganizations.Load())
			if tc.starts != "" {
				s := &n.gpuletStarts
				require.Equal(t, tc.starts, fmt.Sprint(s.beside.Load(), s.afterDrain.Load(), s.overOld.Load()))
			}
		})
	}
}

// On a GPU the room a gpu-let lacks beside the old ones is memory or a MIG
// instance, which two executors cannot share: StartOver starts nothing
// there, and the reorganization drains the old ones first.
func TestStartOverOnlyOnTheCPU(t *testing.T) {
	devices, err := mps.New(mps.Options{Spec: mps.Spec{Mode: mps.ModeList, Entries: []mps.Entry{{Kind: mps.KindEmulated, Profiles: "igniter-v100", Count: 1, MemoryGB: 16}}}, CPUs: []int{0}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, devices.Close(context.Background())) })
	gpu := devices.Inventory().Devices[0]
	n := &node{devices: devices, log: zap.NewNop()}
	let := gpulet.GPULet{Size: 50, Models: []gpulet.Placement{{Name: "a", Batch: 4, Rate: 10}}}
	g, err := executors{n: n}.StartOver(context.Background(), &gpulet.GPUPlan{ID: gpu.ID, GPULets: []gpulet.GPULet{let}}, let, []*gpuletRun{{id: gpu.ID + "-100-1"}})
	require.ErrorIs(t, err, errNoOverlap)
	require.Nil(t, g)
	require.Zero(t, devices.Inventory().Devices[0].Leased, "nothing leased")
}
