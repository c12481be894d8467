package engine

import (
	"errors"
	"fmt"
	"slices"
)

var (
	// ErrInvalidInput is wrapped by every error about a request's tensors or
	// requested outputs; the executor answers it INVALID_ARGUMENT.
	ErrInvalidInput = errors.New("invalid input")
	// ErrCancelled is returned by a run stopped because its context ended
	// (preemption, shutdown).
	ErrCancelled = errors.New("run cancelled")
	// ErrBatchTooLarge is returned when a batch carries more rows than the
	// model's MaxBatchSize.
	ErrBatchTooLarge = errors.New("batch too large")
	// ErrInvalidSpec is returned by Load for a ModelSpec that does not hold
	// together, or whose tensors disagree with the model file.
	ErrInvalidSpec = errors.New("invalid model spec")
	// ErrInvalidOptions is returned by NewORT for options out of range.
	ErrInvalidOptions = errors.New("invalid engine options")
	// ErrUnsupported is returned by Load for a model with a tensor the
	// engine cannot serve (a type without a protocol name, a batched model
	// whose dimension 0 is fixed or that has a scalar).
	ErrUnsupported = errors.New("unsupported model")
	// ErrProviderUnavailable is returned when the ONNX Runtime library
	// lacks the execution provider asked for, or the provider cannot start.
	ErrProviderUnavailable = errors.New("execution provider unavailable")
	// ErrLoadFailed is returned when the runtime cannot create a session
	// for a model file it could read.
	ErrLoadFailed = errors.New("load failed")
	// ErrRunFailed wraps the runtime's own errors from running a model.
	ErrRunFailed = errors.New("run failed")
	// ErrRejectedInput wraps, beside ErrRunFailed, a run the runtime
	// failed for its inputs' values (ONNX Runtime's INVALID_ARGUMENT):
	// answered to the request as its own bad input.
	ErrRejectedInput = errors.New("the model rejected the inputs")
	// ErrClosed is returned by a model or engine used after Close.
	ErrClosed = errors.New("closed")
)

// InputError is one problem with one request: an input tensor that is
// missing, unknown, or of the wrong type, shape or length, or an unknown
// output name. It wraps ErrInvalidInput.
type InputError struct {
	// Request is the request's index in the batch; -1 when the request was
	// checked alone (Validate) or the problem is the batch's output list.
	Request int
	// Kind is "input" or "output".
	Kind string
	// Tensor names the tensor.
	Tensor string
	// Problem says what is wrong.
	Problem string
}

// Error implements error.
func (e *InputError) Error() string {
	if e.Request < 0 {
		return fmt.Sprintf("validate %s %q: %s: %s", e.Kind, e.Tensor, ErrInvalidInput, e.Problem)
	}
	return fmt.Sprintf("validate request %d %s %q: %s: %s", e.Request, e.Kind, e.Tensor, ErrInvalidInput, e.Problem)
}

// Unwrap returns ErrInvalidInput.
func (e *InputError) Unwrap() error { return ErrInvalidInput }

// InvalidRequests returns the indexes, sorted and once each, of the
// requests that err (a Run error, possibly joining several) reports as
// invalid; nil when it reports none by index.
func InvalidRequests(err error) []int {
	var out []int
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *InputError:
			if e.Request >= 0 {
				out = append(out, e.Request)
			}
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	slices.Sort(out)
	return slices.Compact(out)
}

// withRequest returns err with its *InputError, if any, copied and stamped
// with the request index i.
func withRequest(err error, i int) error {
	var ie *InputError
	if errors.As(err, &ie) {
		c := *ie
		c.Request = i
		return &c
	}
	return err
}
