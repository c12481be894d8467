package onnxrt

import (
	"errors"
	"fmt"

	ort "github.com/yalue/onnxruntime_go"
)

// ErrOpLibrary marks a custom operator library ONNX Runtime could not load
// (no such file, not a shared library, no RegisterCustomOps, or its
// registration failed).
var ErrOpLibrary = errors.New("custom operator library not loaded")

// RegisterOpLibraries loads each custom operator library (Triton's
// model_operations) into so, in order, so that a session opened with so
// runs the operators they register. It needs Init. An error names the
// library and says ONNX Runtime's reason.
func RegisterOpLibraries(so *ort.SessionOptions, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	if err := initialized("load custom operator library"); err != nil {
		return err
	}
	for _, path := range paths {
		if err := registerOpLibrary(sessionOptionsPointer(so), path); err != nil {
			return fmt.Errorf("load custom operator library %s: %w: %s", path, ErrOpLibrary, oneLine(err))
		}
	}
	return nil
}
