package engine

import (
	"fmt"
	"slices"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// checkSpecs checks one list of specs: names non-empty and unique, data
// types valid, dims -1 or more. kind is "input" or "output".
func checkSpecs(kind string, specs []TensorSpec) error {
	seen := make(map[string]bool, len(specs))
	for _, s := range specs {
		if s.Name == "" {
			return fmt.Errorf("%w: an %s has no name", ErrInvalidSpec, kind)
		}
		if seen[s.Name] {
			return fmt.Errorf("%w: %s %q is listed twice", ErrInvalidSpec, kind, s.Name)
		}
		seen[s.Name] = true
		if !s.DataType.Valid() {
			return fmt.Errorf("%w: %s %q: data type %q", ErrInvalidSpec, kind, s.Name, s.DataType)
		}
		for i, d := range s.Shape {
			if d < -1 {
				return fmt.Errorf("%w: %s %q: dimension %d is %d", ErrInvalidSpec, kind, s.Name, i, d)
			}
		}
	}
	return nil
}

// perRequest turns a model file's specs, whose dimension 0 is the batch
// when batched, into per-request specs.
func perRequest(kind string, model []TensorSpec, batched bool) ([]TensorSpec, error) {
	out := make([]TensorSpec, len(model))
	for i, s := range model {
		s = s.Clone()
		if batched {
			if len(s.Shape) == 0 {
				return nil, fmt.Errorf("%w: %s %q is a scalar, which cannot carry a batch; set max_batch_size 0", ErrUnsupported, kind, s.Name)
			}
			if s.Shape[0] != -1 {
				return nil, fmt.Errorf("%w: dimension 0 of %s %q is fixed at %d, so it cannot batch; set max_batch_size 0", ErrUnsupported, kind, s.Name, s.Shape[0])
			}
			s.Shape = s.Shape[1:]
		}
		out[i] = s
	}
	return out, nil
}

// narrow checks the configured specs against the model's and returns the
// model's, with dims the model leaves open (-1) fixed where the
// configuration fixes them. Configured specs may list only some tensors.
func narrow(kind string, model, configured []TensorSpec) ([]TensorSpec, error) {
	out := make([]TensorSpec, len(model))
	byName := make(map[string]int, len(model))
	for i, s := range model {
		out[i] = s.Clone()
		byName[s.Name] = i
	}
	for _, c := range configured {
		i, ok := byName[c.Name]
		if !ok {
			return nil, fmt.Errorf("%w: %s %q is not in the model (%ss: %v)", ErrInvalidSpec, kind, c.Name, kind, specNames(model))
		}
		m := &out[i]
		if c.DataType != m.DataType {
			return nil, fmt.Errorf("%w: %s %q is %s in the model, %s in the configuration", ErrInvalidSpec, kind, c.Name, m.DataType, c.DataType)
		}
		if len(c.Shape) != len(m.Shape) {
			return nil, fmt.Errorf("%w: %s %q has shape %v in the model, %v in the configuration", ErrInvalidSpec, kind, c.Name, m.Shape, c.Shape)
		}
		for d := range c.Shape {
			switch {
			case m.Shape[d] == -1:
				m.Shape[d] = c.Shape[d]
			case c.Shape[d] != -1 && c.Shape[d] != m.Shape[d]:
				return nil, fmt.Errorf("%w: %s %q has shape %v in the model, %v in the configuration", ErrInvalidSpec, kind, c.Name, m.Shape, c.Shape)
			}
		}
	}
	return out, nil
}

func specNames(specs []TensorSpec) []string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

func cloneSpecs(specs []TensorSpec) []TensorSpec {
	out := make([]TensorSpec, len(specs))
	for i, s := range specs {
		out[i] = s.Clone()
	}
	return out
}

// fillShape returns the shape of a zero-filled tensor for spec: rows in
// front when batched, and 1 for every dim the spec leaves open (-1).
func fillShape(spec []int64, rows int64, batched bool) []int64 {
	shape := make([]int64, 0, len(spec)+1)
	if batched {
		shape = append(shape, rows)
	}
	for _, d := range spec {
		if d == -1 {
			d = 1
		}
		shape = append(shape, d)
	}
	return shape
}

// wantShape formats the shape a request must have, "[rows 3 -1]" when
// batched.
func wantShape(spec []int64, batched bool) string {
	if !batched {
		return fmt.Sprint(spec)
	}
	if len(spec) == 0 {
		return "[rows]"
	}
	return "[rows " + fmt.Sprint(spec)[1:]
}

// zeroRequest returns one request of zero-filled inputs with the given rows,
// an input's open dimensions at the dims at gives it, else 1.
func zeroRequest(specs []TensorSpec, at map[string][]int64, rows int64, batched bool) ([]tensor.Tensor, error) {
	ins := make([]tensor.Tensor, len(specs))
	for i, s := range specs {
		spec := s.Shape
		if dims, ok := at[s.Name]; ok {
			spec = dims // fits spec (setWarmupShapes)
		}
		t, err := tensor.Zeros(s.Name, s.DataType, fillShape(spec, rows, batched))
		if err != nil {
			return nil, err
		}
		ins[i] = t
	}
	return ins, nil
}

// sameShapes reports whether two requests' inputs (in model order) agree in
// every dim but the first.
func sameShapes(a, b []tensor.Tensor) bool {
	for i := range a {
		if !slices.Equal(a[i].Shape[1:], b[i].Shape[1:]) {
			return false
		}
	}
	return true
}
