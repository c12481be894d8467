package loadgen

import (
	"testing"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/stretchr/testify/require"
)

// BenchmarkServerDecode is what the server's decoder (kserve.DecodeRequest)
// costs on the payloads NewPayload builds for the modelzoo's lenet5
// ([1,1,28,28] FP32: 784 values), as JSON and as a binary tensor.
func BenchmarkServerDecode(b *testing.B) {
	m := &Model{MaxBatchSize: 32, Metadata: kserve.ModelMetadata{Inputs: []kserve.TensorMetadata{{Name: "input", DataType: "FP32", Shape: []int64{-1, 1, 28, 28}}}}}
	for _, bin := range []bool{false, true} {
		p, err := NewPayload(m, bin, 1)
		require.NoError(b, err)
		b.Run(map[bool]string{false: "json", true: "binary"}[bin], func(b *testing.B) {
			b.SetBytes(int64(len(p.Body)))
			for b.Loop() {
				if _, err := kserve.DecodeRequest(p.Body, p.JSONLen); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNewPayload is the cost of building one lenet5 request.
func BenchmarkNewPayload(b *testing.B) {
	m := &Model{MaxBatchSize: 32, Metadata: kserve.ModelMetadata{Inputs: []kserve.TensorMetadata{{Name: "input", DataType: "FP32", Shape: []int64{-1, 1, 28, 28}}}}}
	for b.Loop() {
		if _, err := NewPayload(m, false, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// A generated request's dynamic dimensions take the sizes the model's
// profile shapes give, or those a caller sets over them (--shape), else 1;
// a shape that does not fit the input is refused.
func TestPayloadShapes(t *testing.T) {
	text := func() *Model {
		return &Model{MaxBatchSize: 8, Metadata: kserve.ModelMetadata{Inputs: []kserve.TensorMetadata{
			{Name: "ids", DataType: "INT64", Shape: []int64{-1, -1}},
			{Name: "image", DataType: "FP32", Shape: []int64{-1, 3, -1}},
		}}}
	}
	tests := []struct {
		name           string
		server, caller map[string][]int64
		want           [][]int64
		err            string
	}{
		{name: "none", want: [][]int64{{1, 1}, {1, 3, 1}}},
		{name: "the server's", server: map[string][]int64{"ids": {128}}, want: [][]int64{{1, 128}, {1, 3, 1}}},
		{name: "the caller's over the server's", server: map[string][]int64{"ids": {128}},
			caller: map[string][]int64{"ids": {16}, "image": {3, 64}, "other": {4}}, want: [][]int64{{1, 16}, {1, 3, 64}}},
		{name: "with the batch dimension", caller: map[string][]int64{"ids": {1, 16}}, err: `shape [1 16] of input "ids" does not fit its dims [-1]`},
		{name: "a fixed dim changed", caller: map[string][]int64{"image": {4, 64}}, err: `dim 0 is 4 where the input fixes it at 3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := text()
			m.Shapes = tt.server
			m.SetShapes(tt.caller)
			p, err := NewPayload(m, false, 1)
			if tt.err != "" {
				require.ErrorIs(t, err, ErrPayload)
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			req, err := kserve.DecodeRequest(p.Body, p.JSONLen)
			require.NoError(t, err)
			for i, in := range req.Inputs {
				require.Equal(t, tt.want[i], in.Shape, in.Name)
			}
		})
	}
}

// Zero data holds zeros in every element (BYTES elements empty), as JSON
// and as binary tensors, so that integer inputs indexing a table stay in
// its first row.
func TestZeroPayload(t *testing.T) {
	m := &Model{MaxBatchSize: 8, Metadata: kserve.ModelMetadata{Inputs: []kserve.TensorMetadata{
		{Name: "ids", DataType: "INT64", Shape: []int64{-1, 3}},
		{Name: "x", DataType: "FP32", Shape: []int64{-1, 2}},
		{Name: "s", DataType: "BYTES", Shape: []int64{-1, 1}},
	}}}
	for _, bin := range []bool{false, true} {
		p, err := NewZeroPayload(m, bin)
		require.NoError(t, err)
		req, err := kserve.DecodeRequest(p.Body, p.JSONLen)
		require.NoError(t, err)
		require.Len(t, req.Inputs, 3)
		for _, in := range req.Inputs[:2] {
			for _, b := range in.Data {
				require.Zero(t, b, "%s, binary %v", in.Name, bin)
			}
		}
		elems, err := tensor.BytesElements(req.Inputs[2].Data)
		require.NoError(t, err)
		require.Equal(t, [][]byte{{}}, elems)
	}
	random, err := NewPayload(m, true, 1)
	require.NoError(t, err)
	zero, err := NewZeroPayload(m, true)
	require.NoError(t, err)
	require.NotEqual(t, random.Body, zero.Body)
}

// TestStringElements: BYTES elements are random words of the length asked
// for, or the string given in every one, as perf_analyzer's --string-length
// and --string-data make them.
func TestStringElements(t *testing.T) {
	word := "hello"
	for _, tc := range []struct {
		name   string
		length int
		word   *string
		check  func(t *testing.T, e []byte)
	}{
		{name: "the default", check: func(t *testing.T, e []byte) { require.Len(t, e, 16) }},
		{name: "a length", length: 5, check: func(t *testing.T, e []byte) { require.Regexp(t, `^[a-z]{5}$`, string(e)) }},
		{name: "a string", length: 5, word: &word, check: func(t *testing.T, e []byte) { require.Equal(t, "hello", string(e)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Model{MaxBatchSize: 8, WordLength: tc.length, Word: tc.word, Metadata: kserve.ModelMetadata{Inputs: []kserve.TensorMetadata{
				{Name: "s", DataType: "BYTES", Shape: []int64{-1, 3}},
			}}}
			for _, bin := range []bool{false, true} {
				p, err := NewPayload(m, bin, 1)
				require.NoError(t, err)
				req, err := kserve.DecodeRequest(p.Body, p.JSONLen)
				require.NoError(t, err)
				elems, err := tensor.BytesElements(req.Inputs[0].Data)
				require.NoError(t, err)
				require.Len(t, elems, 3)
				for _, e := range elems {
					tc.check(t, e)
				}
			}
		})
	}
}

// A JSON request's parameters travel in its ModelInfer request, each in
// the field of its kind; what gRPC has no form for, or asks REST's answer
// in binary, is left out.
func TestGRPCRequestCarriesParameters(t *testing.T) {
	p := &Payload{Body: []byte(`{"parameters": {"priority": 2, "timeout": 5000, "tag": "a:b", "flag": true, "off": false, "scale": 0.5,
		"big": 18446744073709551615, "list": [1], "none": null, "binary_data_output": true},
		"inputs": [{"name": "x", "shape": [1], "datatype": "INT32", "data": [7]}]}`), JSONLen: -1}
	req, err := p.GRPCRequest("m")
	require.NoError(t, err)
	require.Equal(t, map[string]*pb.InferParameter{
		"priority": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 2}},
		"timeout":  {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 5000}},
		"tag":      {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "a:b"}},
		"flag":     {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}},
		"off":      {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: false}},
		"scale":    {ParameterChoice: &pb.InferParameter_DoubleParam{DoubleParam: 0.5}},
		"big":      {ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: 18446744073709551615}},
	}, req.Parameters)
	p = &Payload{Body: []byte(`{"inputs": [{"name": "x", "shape": [1], "datatype": "INT32", "data": [7]}]}`), JSONLen: -1}
	req, err = p.GRPCRequest("m")
	require.NoError(t, err)
	require.Nil(t, req.Parameters)
}
