package repository

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// batchDim stands for a batch dimension in the shapes checkShapes compares:
// it fits any size, as -1 does, and reads "N".
const batchDim = -2

// checkShapes checks that every tensor of pipeline m fits where it goes,
// as Triton checks an ensemble when it loads it: each step's input against
// the shape of the tensor it reads (the pipeline's input as declared, what
// the step that writes it gives, or a row of the fan-out), and each of the
// pipeline's outputs as declared against what its step writes (a row per
// object after the fan-out). Shapes are compared with their batch
// dimensions, a pipeline's or a model's that batches; a dimension of -1
// fits any. steps are m's step models in step order. A shape that does not
// fit would refuse every request at the step: 400 for a request that the
// pipeline's own metadata asks for. A shape not known (nil dims) fits any.
func (m *Model) checkShapes(steps []*Model, bad func(string, ...any)) {
	e := m.Config.Ensemble
	pipelineBatches := m.Config.MaxBatchSize > 0
	// given is each tensor's shape as it stands (batch included), and who
	// gives it; the words for a message are made only for one.
	type given struct {
		dims    []int64
		by      int  // the step that writes it, -1 the request
		batched bool // written by a model that batches
	}
	shapes := map[string]given{}
	step := func(i int) string { return fmt.Sprintf("%s (%s)", e.Steps[i].Place(), e.Steps[i].StepKey()) }
	source := func(g given) string {
		if g.by < 0 {
			return "the pipeline's input"
		}
		return "what " + step(g.by) + " writes"
	}
	for _, in := range m.Inputs {
		if in.Dims != nil {
			shapes[in.Name] = given{dims: withBatch(pipelineBatches, in.Dims), by: -1}
		}
	}
	var row []int64 // a row of the fan-out, without a batch dimension; nil before it
	for i, s := range e.Steps {
		batches := steps[i].Config.MaxBatchSize > 0
		for _, in := range steps[i].Inputs {
			v := s.Inputs[in.Name]
			g, ok := shapes[v]
			if !ok || in.Dims == nil {
				continue
			}
			have, src := g.dims, ""
			if v == e.Fanout && row != nil {
				// A row, with a batch of 1 where the model batches (splitRows).
				have, src = row, "a row of "
				if batches {
					have = append([]int64{1}, row...)
				}
			}
			if want := withBatch(batches, in.Dims); !dimsFit(have, want) {
				bad("%s: input %q is %s but %q is %s (%s%s)", step(i), in.Name, dimsText(want), v, dimsText(have), src, source(g))
			}
		}
		for _, out := range steps[i].Outputs {
			v, ok := s.Outputs[out.Name]
			if !ok || out.Dims == nil {
				continue
			}
			d := withBatch(batches, out.Dims)
			shapes[v] = given{dims: d, by: i, batched: batches}
			if v == e.Fanout {
				// Rows along the dimension after the pipeline's batch.
				if pipelineBatches && len(d) > 0 {
					d = d[1:]
				}
				if len(d) > 0 {
					row = slices.Clone(d[1:])
				}
			}
		}
	}
	for _, o := range m.Outputs {
		g, ok := shapes[o.Name]
		if !ok || o.Dims == nil {
			continue
		}
		have := g.dims
		if e.FanoutStep >= 0 && g.by >= e.FanoutStep {
			// Written once per row: the rows' outputs joined along a new
			// first dimension, each without its batch of 1 (joinRows).
			if g.batched && len(have) > 0 {
				have = have[1:]
			}
			have = withBatch(pipelineBatches, append([]int64{-1}, have...))
		}
		if want := withBatch(pipelineBatches, o.Dims); !dimsFit(have, want) {
			bad("output %q is declared %s but is %s (%s)", o.Name, dimsText(want), dimsText(have), source(g))
		}
	}
}

// withBatch is dims with a batch dimension in front when batches.
func withBatch(batches bool, dims []int64) []int64 {
	if batches {
		return append([]int64{batchDim}, dims...)
	}
	return dims
}

// dimsFit reports whether shapes a and b can be the same: as many
// dimensions, each equal or any in either (-1, or a batch).
func dimsFit(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && a[i] >= 0 && b[i] >= 0 {
			return false
		}
	}
	return true
}

// dimsText is a shape for a message: "[N 4 16]", N a batch.
func dimsText(d []int64) string {
	parts := make([]string, len(d))
	for i, v := range d {
		if v == batchDim {
			parts[i] = "N"
		} else {
			parts[i] = strconv.FormatInt(v, 10)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}
