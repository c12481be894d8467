package repository

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// checkProfileShapes checks the configuration's profile_shapes against the
// model's inputs, once they are known: each names an input that has a
// dynamic dimension, with its number of dims and its fixed ones as they
// are. An input with a dynamic dimension (other than the batch) and no
// profile shape is noted: it is profiled at 1 there, so requests larger
// there run longer than the model's plan counts.
//
// Shapes from a model_warmup are not refused: the warm-up gives every
// input's dims, so those of inputs without a dynamic dimension are left
// out, and those that do not fit are left out with a note. The versions of
// a folder share its configuration, so the shapes kept are a map of m's
// own: each version is checked against its own file's inputs.
func (m *Model) checkProfileShapes() error {
	var kept map[string][]int64
	for _, name := range sortedKeys(m.Config.ProfileShapes) {
		dims := m.Config.ProfileShapes[name]
		err := fitProfileShape(m.Inputs, name, dims)
		switch {
		case err == nil:
			if kept == nil {
				kept = map[string][]int64{}
			}
			kept[name] = dims
		case !m.Config.shapesFromWarmup:
			return fmt.Errorf("profile_shapes: %w", err)
		case !errors.Is(err, errNotDynamic):
			m.Notes = append(m.Notes, fmt.Sprintf("model_warmup: its dims of %s not used: %v", name, err))
		}
	}
	m.Config.ProfileShapes = kept
	if kept != nil && m.Config.shapesFromWarmup {
		m.Notes = append(m.Notes, "model_warmup: dynamic dimensions profiled at "+tensor.FormatShapes(m.Config.ProfileShapes)+
			", its first request's dims (the parameter profile_shapes sets others)")
	}
	var open []string
	for _, in := range m.Inputs {
		if _, ok := m.Config.ProfileShapes[in.Name]; !ok && slices.Contains(in.Dims, -1) {
			open = append(open, fmt.Sprintf("%s %v", in.Name, in.Dims))
		}
	}
	if len(open) > 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("dynamic dimensions profiled at 1: %s; requests larger there run longer than the model's plan counts; "+
			"give the size requests bring in profile_shapes (config.yaml; config.pbtxt: the parameter %s), and the next start or load of %s measures it there",
			strings.Join(open, ", "), ParamProfileShapes, m.Family))
	}
	return nil
}

// errNotDynamic: a profile shape for an input whose dims are all fixed.
var errNotDynamic = errors.New("no dynamic dimension")

// fitProfileShape checks a profile shape, dims, against the input name of
// inputs: it must have one, with a dynamic dimension, as many dims and
// the fixed ones as they are.
func fitProfileShape(inputs []TensorSpec, name string, dims []int64) error {
	i := slices.IndexFunc(inputs, func(t TensorSpec) bool { return t.Name == name })
	if i < 0 {
		return fmt.Errorf("%q is not an input of the model (inputs: %s)", name, strings.Join(tensorNames(inputs), ", "))
	}
	in := inputs[i]
	if !slices.Contains(in.Dims, -1) {
		return fmt.Errorf("input %q has %w (dims %v); leave it out", name, errNotDynamic, in.Dims)
	}
	if _, err := tensor.FitDims(in.Dims, dims); err != nil {
		return fmt.Errorf("input %q (dims %v): %v", name, in.Dims, err)
	}
	return nil
}

// tensorNames lists specs' names in order.
func tensorNames(specs []TensorSpec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}
