package main

import (
	"fmt"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// shapesFlag is the repeatable --shape NAME:D1,D2,… of gpuletd load and
// gpuletd infer, as perf_analyzer's --shape: the dims of one request's
// input (without the batch dimension) where the model leaves some open.
type shapesFlag map[string][]int64

// shapeUsage is the flag's help.
const shapeUsage = "an input's dims where the model has dynamic ones, as NAME:D1,D2 without the batch dimension (perf_analyzer's --shape; again for each input); default the model's profile_shapes, else 1"

func (f *shapesFlag) String() string {
	if f == nil || len(*f) == 0 {
		return ""
	}
	return tensor.FormatShapes(*f)
}

func (f *shapesFlag) Set(s string) error {
	name, dims, err := tensor.ParseShape(s)
	if err != nil {
		return err
	}
	if *f == nil {
		*f = shapesFlag{}
	}
	if _, dup := (*f)[name]; dup {
		return fmt.Errorf("input %q given twice", name)
	}
	(*f)[name] = dims
	return nil
}

func (f *shapesFlag) Type() string { return "NAME:DIMS" }
