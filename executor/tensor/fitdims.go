package tensor

import (
	"fmt"
	"slices"
)

// FitDims is the concrete shape of one request's tensor whose declared dims
// leave some open (-1), at the shape a caller gives (profile_shapes, a
// warm-up shape, a load's --shape): an open dim takes the given size, a
// fixed one must equal it, and every given size is positive. A nil shape
// sets every open dim to 1. Both exclude the batch dimension. The error
// says which dim does not fit and wraps ErrInvalid.
func FitDims(declared, shape []int64) ([]int64, error) {
	out := slices.Clone(declared)
	if shape == nil {
		for i, d := range out {
			if d < 0 {
				out[i] = 1
			}
		}
		return out, nil
	}
	if len(shape) != len(declared) {
		return nil, &shapeError{fmt.Sprintf("%d dims given where the input has %d (leave the batch dimension out)", len(shape), len(declared))}
	}
	for i, d := range declared {
		switch {
		case shape[i] <= 0:
			return nil, &shapeError{fmt.Sprintf("dim %d is %d: sizes are positive", i, shape[i])}
		case d >= 0 && shape[i] != d:
			return nil, &shapeError{fmt.Sprintf("dim %d is %d where the input fixes it at %d", i, shape[i], d)}
		}
		out[i] = shape[i]
	}
	return out, nil
}

// shapeError is FitDims' error: its message alone (the callers name the
// tensor), ErrInvalid to errors.Is.
type shapeError struct{ msg string }

func (e *shapeError) Error() string { return e.msg }
func (e *shapeError) Unwrap() error { return ErrInvalid }
