package mps

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// guard runs one NVML call and turns a failure into an error that wraps
// ErrNVML and the nvml.Return. A panic becomes an error too: go-nvml panics
// in some calls when the library or a symbol is missing, and its mocks panic
// on methods nobody set. (A call made after a failed Init can kill the process
// outright — no recover helps — so callers never call past a failed Init.)
func guard(op string, f func() nvml.Return) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: %w: panicked: %v", op, ErrNVML, r)
		}
	}()
	if ret := f(); ret != nvml.SUCCESS {
		return fmt.Errorf("%s: %w: %w", op, ErrNVML, ret)
	}
	return nil
}

// call is guard for NVML calls that return a value.
func call[T any](op string, f func() (T, nvml.Return)) (T, error) {
	var v T
	err := guard(op, func() nvml.Return {
		var ret nvml.Return
		v, ret = f()
		return ret
	})
	return v, err
}

// notSupported says whether err is NVML's answer for a query the device or
// driver does not support (or a mock does not implement).
func notSupported(err error) bool {
	return errors.Is(err, nvml.ERROR_NOT_SUPPORTED) || errors.Is(err, nvml.ERROR_FUNCTION_NOT_FOUND)
}
