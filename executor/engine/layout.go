package engine

import (
	"errors"
	"fmt"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// layout is a loaded model's tensors and batching, shared by both engines:
// it validates requests and puts their tensors in model order.
type layout struct {
	name     string
	maxBatch int
	inputs   []TensorSpec // per request
	outputs  []TensorSpec // per request
	inIndex  map[string]int
	outIndex map[string]int
	// warmShapes are the inputs' warm-up dims (ModelSpec.WarmupShapes,
	// checked by setWarmupShapes).
	warmShapes map[string][]int64
}

func newLayout(name string, maxBatch int, inputs, outputs []TensorSpec) (*layout, error) {
	if maxBatch < 0 {
		return nil, fmt.Errorf("%w: max_batch_size %d", ErrInvalidSpec, maxBatch)
	}
	if len(inputs) == 0 {
		return nil, fmt.Errorf("%w: no inputs", ErrInvalidSpec)
	}
	if len(outputs) == 0 {
		return nil, fmt.Errorf("%w: no outputs", ErrInvalidSpec)
	}
	if err := checkSpecs("input", inputs); err != nil {
		return nil, err
	}
	if err := checkSpecs("output", outputs); err != nil {
		return nil, err
	}
	l := &layout{
		name:     name,
		maxBatch: maxBatch,
		inputs:   cloneSpecs(inputs),
		outputs:  cloneSpecs(outputs),
		inIndex:  make(map[string]int, len(inputs)),
		outIndex: make(map[string]int, len(outputs)),
	}
	for i, s := range inputs {
		l.inIndex[s.Name] = i
	}
	for i, s := range outputs {
		l.outIndex[s.Name] = i
	}
	return l, nil
}

// The Loaded methods every engine's model shares through its layout.

// Inputs implements Loaded.
func (l *layout) Inputs() []TensorSpec { return cloneSpecs(l.inputs) }

// Outputs implements Loaded.
func (l *layout) Outputs() []TensorSpec { return cloneSpecs(l.outputs) }

// MaxBatchSize implements Loaded.
func (l *layout) MaxBatchSize() int { return l.maxBatch }

// Validate implements Loaded.
func (l *layout) Validate(inputs []tensor.Tensor) error {
	_, _, err := l.validate(inputs)
	return err
}

// ValidateOutputs implements Loaded.
func (l *layout) ValidateOutputs(names []string) error {
	_, err := l.selectOutputs(names)
	return err
}

// batched says whether the model has a batch dimension.
func (l *layout) batched() bool { return l.maxBatch > 0 }

// validate checks one request and returns its inputs in model order and
// its rows (1 for a model that does not batch). Errors are *InputError
// with Request -1.
func (l *layout) validate(ins []tensor.Tensor) ([]tensor.Tensor, int64, error) {
	ordered := make([]tensor.Tensor, len(l.inputs))
	seen := make([]bool, len(l.inputs))
	for _, t := range ins {
		i, ok := l.inIndex[t.Name]
		if !ok {
			return nil, 0, l.inputErr(t.Name, fmt.Sprintf("not an input of model %s (inputs: %v)", l.name, specNames(l.inputs)))
		}
		if seen[i] {
			return nil, 0, l.inputErr(t.Name, "given twice")
		}
		seen[i] = true
		ordered[i] = t
	}
	for i, ok := range seen {
		if !ok {
			return nil, 0, l.inputErr(l.inputs[i].Name, "missing")
		}
	}
	rows := int64(1)
	for i, t := range ordered {
		if err := l.checkTensor(l.inputs[i], t); err != nil {
			return nil, 0, err
		}
		if !l.batched() {
			continue
		}
		if i == 0 {
			rows = t.Shape[0]
		} else if t.Shape[0] != rows {
			return nil, 0, l.inputErr(t.Name, fmt.Sprintf("%d rows, input %q has %d", t.Shape[0], ordered[0].Name, rows))
		}
	}
	return ordered, rows, nil
}

// checkTensor checks one input against its spec.
func (l *layout) checkTensor(spec TensorSpec, t tensor.Tensor) error {
	if t.DataType != spec.DataType {
		return l.inputErr(t.Name, fmt.Sprintf("data type %s, model wants %s", t.DataType, spec.DataType))
	}
	shape := t.Shape
	if l.batched() {
		if len(shape) != len(spec.Shape)+1 || !tensor.MatchShape(shape[1:], spec.Shape) {
			return l.inputErr(t.Name, fmt.Sprintf("shape %v does not match %s", shape, wantShape(spec.Shape, true)))
		}
		switch rows := shape[0]; {
		case rows < 1:
			return l.inputErr(t.Name, fmt.Sprintf("shape %v has no rows", shape))
		case rows > int64(l.maxBatch):
			return l.inputErr(t.Name, fmt.Sprintf("%d rows, more than max_batch_size %d", rows, l.maxBatch))
		}
	} else if !tensor.MatchShape(shape, spec.Shape) {
		return l.inputErr(t.Name, fmt.Sprintf("shape %v does not match %s", shape, wantShape(spec.Shape, false)))
	}
	n, err := tensor.NumElements(shape)
	if err != nil {
		return l.inputErr(t.Name, err.Error())
	}
	if n == 0 {
		return l.inputErr(t.Name, fmt.Sprintf("shape %v has no elements", shape))
	}
	if t.DataType.Size() == 0 {
		if err := t.Check(); err != nil {
			return l.inputErr(t.Name, err.Error())
		}
	} else if want := n * int64(t.DataType.Size()); int64(len(t.Data)) != want {
		return l.inputErr(t.Name, fmt.Sprintf("%d bytes, shape %v of %s needs %d", len(t.Data), shape, t.DataType, want))
	}
	if t.DataType == tensor.Bool {
		for i, b := range t.Data {
			if b > 1 {
				return l.inputErr(t.Name, fmt.Sprintf("BOOL element %d is %d, want 0 or 1", i, b))
			}
		}
	}
	return nil
}

func (l *layout) inputErr(name, problem string) error {
	return &InputError{Request: -1, Kind: "input", Tensor: name, Problem: problem}
}

// selectOutputs returns the indexes of the named outputs; every output
// when names is empty.
func (l *layout) selectOutputs(names []string) ([]int, error) {
	if len(names) == 0 {
		idx := make([]int, len(l.outputs))
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	idx := make([]int, len(names))
	for i, name := range names {
		j, ok := l.outIndex[name]
		if !ok {
			return nil, &InputError{Request: -1, Kind: "output", Tensor: name,
				Problem: fmt.Sprintf("not an output of model %s (outputs: %v)", l.name, specNames(l.outputs))}
		}
		for _, k := range idx[:i] {
			if k == j {
				return nil, &InputError{Request: -1, Kind: "output", Tensor: name, Problem: "asked twice"}
			}
		}
		idx[i] = j
	}
	return idx, nil
}

// batch is a validated batch: each request's inputs in model order and its
// rows.
type batch struct {
	inputs [][]tensor.Tensor
	rows   []int64
	total  int64
}

// validateBatch validates every request. Invalid requests give one joined
// error of *InputError stamped with their indexes; too many rows give
// ErrBatchTooLarge.
func (l *layout) validateBatch(reqs [][]tensor.Tensor) (batch, error) {
	b := batch{inputs: make([][]tensor.Tensor, len(reqs)), rows: make([]int64, len(reqs))}
	var errs []error
	for i, req := range reqs {
		ordered, rows, err := l.validate(req)
		if err != nil {
			errs = append(errs, withRequest(err, i))
			continue
		}
		b.inputs[i], b.rows[i] = ordered, rows
		b.total += rows
	}
	if len(errs) > 0 {
		return batch{}, fmt.Errorf("run model %s: %w", l.name, errors.Join(errs...))
	}
	if l.batched() && b.total > int64(l.maxBatch) {
		return batch{}, fmt.Errorf("run model %s: %w: %d rows in %d requests, max_batch_size %d", l.name, ErrBatchTooLarge, b.total, len(reqs), l.maxBatch)
	}
	return b, nil
}

// groups returns the requests to run together, as lists of request
// indexes: every request alone for a model that does not batch; otherwise
// requests whose inputs agree in every dim but the first, in arrival order.
func (l *layout) groups(b batch) [][]int {
	if !l.batched() {
		out := make([][]int, len(b.inputs))
		for i := range out {
			out[i] = []int{i}
		}
		return out
	}
	var out [][]int
next:
	for i, req := range b.inputs {
		for g, members := range out {
			if sameShapes(b.inputs[members[0]], req) {
				out[g] = append(out[g], i)
				continue next
			}
		}
		out = append(out, []int{i})
	}
	return out
}

// setWarmupShapes keeps shapes, ModelSpec.WarmupShapes, for the warm-up
// after checking that each names an input and fits its dims: as many, and
// equal where the input's are fixed.
func (l *layout) setWarmupShapes(shapes map[string][]int64) error {
	for name, dims := range shapes {
		i, ok := l.inIndex[name]
		if !ok {
			return fmt.Errorf("%w: warm-up shape of %q: the model has no such input", ErrInvalidSpec, name)
		}
		spec := l.inputs[i].Shape
		if _, err := tensor.FitDims(spec, dims); err != nil {
			return fmt.Errorf("%w: warm-up shape %v of input %q does not fit its dims %v: %v", ErrInvalidSpec, dims, name, spec, err)
		}
	}
	l.warmShapes = shapes
	return nil
}
