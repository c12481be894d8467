package repository

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// dagStep is one step of a test pipeline: model reads ins (its input →
// the pipeline's tensor) and writes outs.
type dagStep struct {
	model     string
	ins, outs map[string]string
}

// dagEnsemble is the config.pbtxt of a pipeline with steps as written,
// reading "image", answering outputs and fanning out fanout ("" none).
func dagEnsemble(fanout string, outputs []string, steps ...dagStep) string {
	var b strings.Builder
	b.WriteString("name: \"dag\"\nplatform: \"ensemble\"\nmax_batch_size: 1\n")
	b.WriteString("input [ { name: \"image\", data_type: TYPE_FP32, dims: [ 4 ] } ]\noutput [\n")
	for i, o := range outputs {
		sep := ","
		if i == len(outputs)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  { name: %q, data_type: TYPE_FP32, dims: [ -1 ] }%s\n", o, sep)
	}
	b.WriteString("]\nparameters { key: \"slo\" value { string_value: \"100ms\" } }\n")
	if fanout != "" {
		fmt.Fprintf(&b, "parameters { key: \"fanout\" value { string_value: %q } }\n", fanout)
	}
	b.WriteString("ensemble_scheduling {\n  step [\n")
	for i, s := range steps {
		fmt.Fprintf(&b, "    { model_name: %q", s.model)
		for _, k := range sortedKeys(s.ins) {
			fmt.Fprintf(&b, " input_map { key: %q value: %q }", k, s.ins[k])
		}
		for _, k := range sortedKeys(s.outs) {
			fmt.Fprintf(&b, " output_map { key: %q value: %q }", k, s.outs[k])
		}
		if i < len(steps)-1 {
			b.WriteString(" },\n")
		} else {
			b.WriteString(" }\n")
		}
	}
	b.WriteString("  ]\n}\n")
	return b.String()
}

func TestEnsembleStepsRunInAnOrderTheyCan(t *testing.T) {
	m := func(kv ...string) map[string]string {
		out := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	tests := []struct {
		name    string
		pbtxt   string
		order   []string // the steps' models in the order they run
		needs   [][]int
		fanStep int
		writer  int
		branch  bool
		waits   [][]int
		// rowReads and rowNeeds: what the rows read that was written
		// before the fan-out, and the steps that write it.
		rowReads []string
		rowNeeds []int
	}{
		{
			name: "written in order, a chain",
			pbtxt: dagEnsemble("", []string{"c"},
				dagStep{"a", m("in", "image"), m("out", "x")},
				dagStep{"b", m("in", "x"), m("out", "y")},
				dagStep{"c", m("in", "y"), m("out", "c")}),
			order: []string{"a", "b", "c"}, needs: [][]int{nil, {0}, {1}}, fanStep: -1, writer: -1,
		},
		{
			name: "a join written first, its branches after",
			pbtxt: dagEnsemble("", []string{"both"},
				dagStep{"join", m("x", "left", "y", "right"), m("out", "both")},
				dagStep{"left", m("in", "image"), m("out", "left")},
				dagStep{"right", m("in", "image"), m("out", "right")}),
			order: []string{"left", "right", "join"}, needs: [][]int{nil, nil, {0, 1}}, fanStep: -1, writer: -1, branch: true,
			waits: [][]int{{2}, {2}, nil},
		},
		{
			name: "a step beside the detector runs before the fan-out",
			pbtxt: dagEnsemble("boxes", []string{"labels", "small"},
				dagStep{"classifier", m("crop", "boxes"), m("scores", "labels")},
				dagStep{"detector", m("in", "image"), m("crops", "boxes")},
				dagStep{"thumb", m("in", "image"), m("out", "small")}),
			order: []string{"thumb", "detector", "classifier"}, needs: [][]int{nil, nil, {1}}, fanStep: 2, writer: 1, branch: true,
			waits: [][]int{nil, {2}, nil}, // the fan-out waits on its writer alone
		},
		{
			name: "two steps on every row",
			pbtxt: dagEnsemble("boxes", []string{"l1", "l2"},
				dagStep{"detector", m("in", "image"), m("crops", "boxes")},
				dagStep{"c1", m("crop", "boxes"), m("scores", "l1")},
				dagStep{"c2", m("crop", "boxes"), m("scores", "l2")}),
			order: []string{"detector", "c1", "c2"}, needs: [][]int{nil, {0}, {0}}, fanStep: 1, writer: 0, branch: true,
			waits: [][]int{{1, 2}, nil, nil},
		},
		{
			name: "a row reads the image and what a step beside the detector wrote",
			pbtxt: dagEnsemble("boxes", []string{"labels"},
				dagStep{"detector", m("in", "image"), m("crops", "boxes")},
				dagStep{"classifier", m("crop", "boxes", "frame", "image", "ctx", "scene"), m("scores", "labels")},
				dagStep{"scener", m("in", "image"), m("out", "scene")}),
			order: []string{"scener", "detector", "classifier"}, needs: [][]int{nil, nil, {0, 1}}, fanStep: 2, writer: 1, branch: true,
			waits: [][]int{{2}, {2}, nil}, rowReads: []string{"image", "scene"}, rowNeeds: []int{0},
		},
		{
			name: "a step before the fan-out reads another output of its writer",
			pbtxt: dagEnsemble("boxes", []string{"labels", "n"},
				dagStep{"detector", m("in", "image"), m("crops", "boxes", "count", "count")},
				dagStep{"classifier", m("crop", "boxes"), m("scores", "labels")},
				dagStep{"counter", m("in", "count"), m("out", "n")}),
			order: []string{"detector", "counter", "classifier"}, needs: [][]int{nil, {0}, {0}}, fanStep: 2, writer: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := writeRepo(t, map[string]entry{"dag": pbtxtEntry(tc.pbtxt, nil)})
			ix, err := Scan(Roots{root}, Options{Read: fakeReader})
			require.NoError(t, err)
			require.Empty(t, ix.Broken)
			p, err := ix.Get("dag")
			require.NoError(t, err)
			e := p.Config.Ensemble
			var order []string
			var needs [][]int
			for k, s := range e.Steps {
				order = append(order, s.Model)
				needs = append(needs, s.Needs)
				require.Equal(t, s.Model, dagModelAt(t, tc.pbtxt, s.At), "step %d keeps its written place", k)
			}
			require.Equal(t, tc.order, order)
			require.Equal(t, tc.needs, needs)
			require.Equal(t, tc.fanStep, e.FanoutStep)
			require.Equal(t, tc.writer, e.FanoutWriter)
			require.Equal(t, tc.branch, e.Branches())
			require.Equal(t, tc.waits, e.Waits)
			require.Equal(t, tc.rowReads, e.RowReads)
			require.Equal(t, tc.rowNeeds, e.RowNeeds)
		})
	}
}

// dagModelAt is the model of the step written at place at in pbtxt.
func dagModelAt(t *testing.T, pbtxt string, at int) string {
	t.Helper()
	lines := strings.Split(pbtxt[strings.Index(pbtxt, "step ["):], "\n")[1:]
	name := strings.SplitN(lines[at], `"`, 3)
	require.Len(t, name, 3)
	return name[1]
}

func TestEnsembleStepsInACycleAreRefused(t *testing.T) {
	m := func(k, v string) map[string]string { return map[string]string{k: v} }
	pbtxt := dagEnsemble("", []string{"out"},
		dagStep{"start", m("in", "image"), m("out", "s")},
		dagStep{"a", map[string]string{"in": "y", "s": "s"}, m("out", "x")},
		dagStep{"b", m("in", "x"), m("out", "y")},
		dagStep{"end", m("in", "y"), m("out", "out")})
	root := writeRepo(t, map[string]entry{"dag": pbtxtEntry(pbtxt, nil)})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader})
	require.NoError(t, err)
	require.Empty(t, ix.Names())
	msg := onlyProblem(ix).Error()
	require.Contains(t, msg, "step[1] (a), step[2] (b) wait on one another")
	require.NotContains(t, msg, "(start)", "what the cycle waits on is not in it")
	require.NotContains(t, msg, "(end)", "what waits on the cycle is not in it")

	// A step that reads what it writes.
	pbtxt = dagEnsemble("", []string{"out"}, dagStep{"self", map[string]string{"in": "image", "back": "out"}, m("out", "out")})
	root = writeRepo(t, map[string]entry{"dag": pbtxtEntry(pbtxt, nil)})
	ix, err = Scan(Roots{root}, Options{Read: fakeReader})
	require.NoError(t, err)
	require.Contains(t, onlyProblem(ix).Error(), "step[0] (self) reads what it writes")
}
