package kserve

import (
	"testing"
	"time"

	"github.com/gpulet/gpuletd/executor/tensor"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/stretchr/testify/require"
)

func typed(name, dt string, shape []int64, c *pb.InferTensorContents) *pb.ModelInferRequest {
	return &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: name, Datatype: dt, Shape: shape, Contents: c}}}
}

func TestDecodeGRPCTypedContents(t *testing.T) {
	tests := []struct {
		dt   string
		c    *pb.InferTensorContents
		want []byte
	}{
		{"BOOL", &pb.InferTensorContents{BoolContents: []bool{true, false}}, []byte{1, 0}},
		{"INT8", &pb.InferTensorContents{IntContents: []int32{-1, 127}}, []byte{0xff, 0x7f}},
		{"INT16", &pb.InferTensorContents{IntContents: []int32{-2, 258}}, []byte{0xfe, 0xff, 2, 1}},
		{"INT32", &pb.InferTensorContents{IntContents: []int32{1, -1}}, []byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}},
		{"INT64", &pb.InferTensorContents{Int64Contents: []int64{1, 2}}, le64(1, 2)},
		{"UINT8", &pb.InferTensorContents{UintContents: []uint32{0, 255}}, []byte{0, 255}},
		{"UINT16", &pb.InferTensorContents{UintContents: []uint32{1, 65535}}, []byte{1, 0, 0xff, 0xff}},
		{"UINT64", &pb.InferTensorContents{Uint64Contents: []uint64{1, 2}}, le64(1, 2)},
		{"FP32", &pb.InferTensorContents{Fp32Contents: []float32{1, -2}}, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}},
		{"FP64", &pb.InferTensorContents{Fp64Contents: []float64{1, 0}}, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"BYTES", &pb.InferTensorContents{BytesContents: [][]byte{[]byte("ab"), {}}}, []byte{2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.dt, func(t *testing.T) {
			r, err := DecodeGRPCRequest(typed("x", tc.dt, []int64{2}, tc.c))
			require.NoError(t, err)
			require.Equal(t, tensor.DataType(tc.dt), r.Inputs[0].DataType)
			require.Equal(t, tc.want, r.Inputs[0].Data)
			require.EqualValues(t, len(tc.want), r.DecodedBytes, "packed from typed contents: held beside the message")
			require.True(t, r.BinaryOutputs, "gRPC outputs travel raw")
		})
	}
}

func TestDecodeGRPCRawAndParameters(t *testing.T) {
	raw := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	m := &pb.ModelInferRequest{Id: "a",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "FP16", Shape: []int64{1, 4}}},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "y"}, {Name: "z", Parameters: map[string]*pb.InferParameter{
			ParamClassification: {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 5}}}}},
		Parameters: map[string]*pb.InferParameter{
			"timeout":  {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 1500}},
			"priority": {ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: 2}},
			"other":    {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "ignored"}},
		},
		RawInputContents: [][]byte{raw}}
	r, err := DecodeGRPCRequest(m)
	require.NoError(t, err)
	require.Equal(t, "a", r.ID)
	require.Equal(t, 1500*time.Microsecond, r.Timeout)
	require.Equal(t, int64(2), r.Priority)
	require.Equal(t, []OutputRequest{{Name: "y", Binary: true}, {Name: "z", Binary: true, Classes: 5}}, r.Outputs)
	require.Same(t, &raw[0], &r.Inputs[0].Data[0], "raw contents are used in place")
	require.Zero(t, r.DecodedBytes)
}

func TestDecodeGRPCRejects(t *testing.T) {
	two := []int64{2}
	tests := []struct {
		name string
		m    *pb.ModelInferRequest
		msg  string
	}{
		{"no inputs", &pb.ModelInferRequest{}, "request has no inputs"},
		{"no name", typed("", "FP32", two, &pb.InferTensorContents{Fp32Contents: []float32{1, 2}}), `input "#0": no name`},
		{"bad datatype", typed("x", "FLOAT", two, nil), `datatype "FLOAT" is not a KServe v2 data type; send FP32`},
		{"unknown datatype", typed("x", "COMPLEX64", two, nil), `datatype "COMPLEX64" is not a KServe v2 data type (FP32, INT64, BOOL, ...)`},
		{"no data", typed("x", "FP32", two, nil), "has no contents and the request no raw_input_contents"},
		{"count", typed("x", "FP32", two, &pb.InferTensorContents{Fp32Contents: []float32{1}}), "fp32_contents holds 1 values but the shape needs 2"},
		{"wrong field", typed("x", "INT64", two, &pb.InferTensorContents{IntContents: []int32{1, 2}}), "int64_contents holds 0 values"},
		{"int8 range", typed("x", "INT8", two, &pb.InferTensorContents{IntContents: []int32{1, 200}}), "int_contents value 200 is out of range for INT8"},
		{"uint16 range", typed("x", "UINT16", two, &pb.InferTensorContents{UintContents: []uint32{1, 70000}}), "out of range for UINT16"},
		{"fp16 typed", typed("x", "FP16", two, &pb.InferTensorContents{Fp32Contents: []float32{1, 2}}), "FP16 has no typed contents in the protocol: send it in raw_input_contents"},
		{"bytes count", typed("x", "BYTES", two, &pb.InferTensorContents{BytesContents: [][]byte{{1}}}), "bytes_contents holds 1 values but the shape needs 2"},
		{"negative dim", typed("x", "FP32", []int64{-1}, &pb.InferTensorContents{}), "shape [-1]"},
		{"raw count", &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "UINT8", Shape: two}, {Name: "y", Datatype: "UINT8", Shape: two}},
			RawInputContents: [][]byte{{1, 2}}}, "raw_input_contents has 1 entries for 2 inputs"},
		{"raw and typed", &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "UINT8", Shape: two, Contents: &pb.InferTensorContents{UintContents: []uint32{1, 2}}}},
			RawInputContents: [][]byte{{1, 2}}}, "has contents although the request uses raw_input_contents"},
		{"twice", &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "UINT8", Shape: two}, {Name: "x", Datatype: "UINT8", Shape: two}},
			RawInputContents: [][]byte{{1, 2}, {3, 4}}}, `input "x" given twice`},
		{"output twice", &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "UINT8", Shape: two}},
			RawInputContents: [][]byte{{1, 2}}, Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "y"}, {Name: "y"}}}, `output "y" asked for twice`},
		{"classification a string", &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "UINT8", Shape: two}},
			RawInputContents: [][]byte{{1, 2}}, Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "y", Parameters: map[string]*pb.InferParameter{
				ParamClassification: {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "3"}}}}}}, `output "y": classification must be an integer`},
		{"priority negative", &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "UINT8", Shape: two}},
			RawInputContents: [][]byte{{1, 2}}, Parameters: map[string]*pb.InferParameter{"priority": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: -2}}}}, "priority must not be negative"},
		{"a parameter of Triton's own", &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "UINT8", Shape: two}},
			RawInputContents: [][]byte{{1, 2}}, Parameters: map[string]*pb.InferParameter{"triton_x": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}}, `"triton_x": keys starting with "triton_" are Triton's own`},
		{"empty final response not a bool", &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "UINT8", Shape: two}},
			RawInputContents: [][]byte{{1, 2}}, Parameters: map[string]*pb.InferParameter{ParamEnableEmptyFinal: {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "true"}}}}, "triton_enable_empty_final_response must be a bool_param"},
		{"timeout negative", &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "UINT8", Shape: two}},
			RawInputContents: [][]byte{{1, 2}}, Parameters: map[string]*pb.InferParameter{"timeout": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: -5}}}}, "timeout must be a positive number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeGRPCRequest(tc.m)
			require.ErrorIs(t, err, ErrBadRequest)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

func TestEncodeGRPCResponse(t *testing.T) {
	out := mustF32(t, "y", []int64{1, 2}, 1, 2)
	res := EncodeGRPCResponse(InferResponseJSON{ModelName: "m", ModelVersion: "3", ID: "i", Parameters: map[string]any{"emulated": true}}, []Output{{Tensor: out}})
	require.Equal(t, "m", res.ModelName)
	require.Equal(t, "3", res.ModelVersion)
	require.Equal(t, "i", res.Id)
	require.True(t, res.Parameters["emulated"].GetBoolParam())
	require.Equal(t, []int64{1, 2}, res.Outputs[0].Shape)
	require.Equal(t, "FP32", res.Outputs[0].Datatype)
	require.Same(t, &out.Data[0], &res.RawOutputContents[0][0], "output bytes are not copied")
}
