package kserve

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// A generate request becomes the inference request of the same tensors:
// keys that name inputs (at the top or in parameters) are those inputs,
// shaped as the metadata allows, the others parameters; what cannot be
// read as either is refused naming it.
func TestGenerateToInfer(t *testing.T) {
	inputs := []TensorMetadata{
		{Name: "text_input", DataType: "BYTES", Shape: []int64{-1, 1}},
		{Name: "image", DataType: "FP32", Shape: []int64{-1, 2, 3}},
		{Name: "ids", DataType: "INT64", Shape: []int64{-1, -1}},
		{Name: "flag", DataType: "BOOL", Shape: []int64{1}},
	}
	tests := []struct {
		name, body, want, err string
	}{
		{name: "text and a parameter", body: `{"id": "42", "text_input": "client input", "parameters": {"stream": false, "temperature": 0}}`,
			want: `{"id": "42", "parameters": {"stream": false, "temperature": 0}, "inputs": [{"name": "text_input", "datatype": "BYTES", "shape": [1, 1], "data": ["client input"]}]}`},
		{name: "a list filling the fixed dimensions", body: `{"image": [1, 2, 3, 4, 5, 6], "max_tokens": 20}`,
			want: `{"parameters": {"max_tokens": 20}, "inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 2, 3], "data": [1, 2, 3, 4, 5, 6]}]}`},
		{name: "the innermost dynamic dimension takes the values", body: `{"ids": [7, 8, 9], "flag": true}`,
			want: `{"inputs": [{"name": "flag", "datatype": "BOOL", "shape": [1], "data": [true]}, {"name": "ids", "datatype": "INT64", "shape": [1, 3], "data": [7, 8, 9]}]}`},
		{name: "an input among the parameters", body: `{"parameters": {"ids": [1], "priority": 2}}`,
			want: `{"parameters": {"priority": 2}, "inputs": [{"name": "ids", "datatype": "INT64", "shape": [1, 1], "data": [1]}]}`},
		{name: "values that do not fill the shape", body: `{"image": [1, 2, 3, 4]}`, err: "image: 4 values do not fill the model's shape [-1 2 3]"},
		{name: "nested lists", body: `{"ids": [[1, 2]]}`, err: "ids: give a value or a list of values, not nested lists"},
		{name: "an object as a parameter", body: `{"sampling": {"top_k": 1}}`, err: "sampling: the model has no input of that name"},
		{name: "an input twice", body: `{"ids": [1], "parameters": {"ids": [2]}}`, err: "input ids given twice"},
		{name: "not an object", body: `["text"]`, err: "a generate request is a JSON object"},
		{name: "an id that is no string", body: `{"id": 42}`, err: "id must be a string"},
		{name: "no input named", body: `{"txt": "x"}`, err: "no key names one of the model's inputs (text_input, image, ids, flag); the other keys are parameters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := GenerateToInfer([]byte(tt.body), inputs)
			if tt.err != "" {
				require.ErrorIs(t, err, ErrBadRequest)
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.JSONEq(t, tt.want, string(got))
			_, err = DecodeRequest(got, -1)
			require.NoError(t, err, "the inference protocol reads it")
		})
	}
}

// An inference answer becomes a generate answer: each output under its
// name, one value bare, several as a list, beside the answer's names and
// parameters.
func TestInferToGenerate(t *testing.T) {
	got, err := InferToGenerate([]byte(`{"id": "42", "model_name": "m", "model_version": "1", "parameters": {"sequence_id": 3},
		"outputs": [{"name": "text_output", "datatype": "BYTES", "shape": [1], "data": ["model output"]},
		{"name": "scores", "datatype": "FP32", "shape": [1, 3], "data": [0.5, 0.25, 1e-7]},
		{"name": "none", "datatype": "FP32", "shape": [0], "data": []}]}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"id": "42", "model_name": "m", "model_version": "1", "sequence_id": 3, "text_output": "model output",
		"scores": [0.5, 0.25, 1e-7], "none": []}`, string(got))
	got, err = InferToGenerate([]byte(`{"model_name": "m", "model_version": "2", "outputs": [{"name": "y", "data": [1]}]}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"model_name": "m", "model_version": "2", "y": 1}`, string(got), "no id when the request gave none")
}

// FuzzGenerateToInfer feeds arbitrary generate bodies: the translation
// never panics, and what it accepts the inference protocol decodes, with
// no more values than the body carried.
func FuzzGenerateToInfer(f *testing.F) {
	f.Add([]byte(`{"id": "42", "text_input": "client input", "parameters": {"stream": false, "temperature": 0}}`))
	f.Add([]byte(`{"image": [1, 2, 3, 4, 5, 6], "ids": [7, 8], "flag": true}`))
	f.Add([]byte(`{"parameters": {"ids": [1], "priority": 2}, "image": [[1]]}`))
	inputs := []TensorMetadata{
		{Name: "text_input", DataType: "BYTES", Shape: []int64{-1, 1}},
		{Name: "image", DataType: "FP32", Shape: []int64{-1, 2, 3}},
		{Name: "ids", DataType: "INT64", Shape: []int64{-1, -1}},
		{Name: "flag", DataType: "BOOL", Shape: []int64{1}},
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := GenerateToInfer(body, inputs)
		if err != nil {
			require.ErrorIs(t, err, ErrBadRequest)
			return
		}
		r, err := DecodeRequest(got, -1)
		if err != nil {
			return // values of the wrong type for their input: the decoder says so
		}
		for _, in := range r.Inputs {
			n, err := tensor.NumElements(in.Shape)
			require.NoError(t, err)
			require.LessOrEqual(t, n, int64(len(body)), "no more values than the body carried")
		}
	})
}
