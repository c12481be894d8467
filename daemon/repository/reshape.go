package repository

import (
	"fmt"
	"slices"
)

// ModelShape is the tensor's shape as the model file sees it (without the
// batch dimension when the model batches): Reshape when the configuration
// gives one, else Dims.
func (s TensorSpec) ModelShape() []int64 {
	if s.Reshape != nil {
		return s.Reshape
	}
	return s.Dims
}

// Reshape gives a tensor of shape the shape to (a request's or answer's
// shape, with its batch dimension first when batched). The batch
// dimension is kept; the rest becomes to, whose one dynamic dimension (-1)
// at most takes what the fixed ones leave of the elements.
func Reshape(shape []int64, batched bool, to []int64) ([]int64, error) {
	var lead, rest []int64
	if batched {
		if len(shape) == 0 {
			return nil, fmt.Errorf("reshape %v: no batch dimension", shape)
		}
		lead, rest = shape[:1], shape[1:]
	} else {
		rest = shape
	}
	n, _ := fixedElements(rest) // a request's shape has no dynamic dimension
	fixed, dyn := fixedElements(to)
	out := append(append(make([]int64, 0, len(lead)+len(to)), lead...), to...)
	switch {
	case dyn == 0 && fixed == n:
		return out, nil
	case dyn == 1 && fixed > 0 && n%fixed == 0:
		out[len(lead)+slices.Index(to, -1)] = n / fixed
		return out, nil
	}
	return nil, fmt.Errorf("reshape %v to %v: %d elements do not fit", shape, to, n)
}

// fixedElements returns the product of a shape's fixed dimensions and how
// many are dynamic (-1).
func fixedElements(s []int64) (product int64, dynamic int) {
	product = 1
	for _, d := range s {
		if d < 0 {
			dynamic++
			continue
		}
		product *= d
	}
	return product, dynamic
}
