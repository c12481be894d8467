package profiler

import (
	"strings"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// inputsAtNote starts the part of a measured run's message that says at
// which shapes its inputs' dynamic dimensions were measured
// (Model.Shapes); a run without it measured them at 1.
const inputsAtNote = "; inputs at "

// inputsAt is the note for shapes; "" for none.
func inputsAt(shapes map[string][]int64) string {
	if len(shapes) == 0 {
		return ""
	}
	return inputsAtNote + tensor.FormatShapes(shapes)
}

// RunShapes is what a profile run's message says its inputs' dynamic
// dimensions were measured at, as tensor.FormatShapes writes the shapes;
// "" for a run that measured them at 1 (or that has none).
func RunShapes(message string) string {
	_, rest, ok := strings.Cut(message, inputsAtNote)
	if !ok {
		return ""
	}
	shapes, _, _ := strings.Cut(rest, ";")
	return strings.TrimSpace(shapes)
}
