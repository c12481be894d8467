package onnxrt

import (
	"errors"
	"fmt"
	"strings"

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

// UnregisteredOp is ONNX Runtime's word for a graph's operator that no
// operator set it knows, nor any library loaded, registers.
const UnregisteredOp = "is not a registered function/op"

// WithOpHint is why ONNX Runtime could not open a model, msg, and, when
// that is an operator nothing registered, what to do: name the library
// that registers it (Triton's model_operations), or, with opLibraries
// loaded, that none of them does.
func WithOpHint(msg string, opLibraries []string) string {
	if !strings.Contains(msg, UnregisteredOp) {
		return msg
	}
	if len(opLibraries) == 0 {
		return msg + " (an operator of no standard set: name the library that registers it in the model's config.pbtxt, model_operations { op_library_filename: \"libops.so\" })"
	}
	return msg + " (none of the libraries model_operations names registers it: " + strings.Join(opLibraries, ", ") + ")"
}
