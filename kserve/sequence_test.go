package kserve

import (
	"testing"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

func TestSequenceParameters(t *testing.T) {
	input := `"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}]`
	tests := []struct {
		name, params string
		want         SequenceRef
		err          string
	}{
		{"none", `{}`, SequenceRef{}, ""},
		{"a number that starts", `{"sequence_id":42,"sequence_start":true}`, SequenceRef{ID: "42", Numeric: true, Number: 42, Start: true}, ""},
		{"the largest number", `{"sequence_id":18446744073709551615}`, SequenceRef{ID: "18446744073709551615", Numeric: true, Number: 1<<64 - 1}, ""},
		{"a string that ends", `{"sequence_id":"call-7","sequence_end":true}`, SequenceRef{ID: "call-7", End: true}, ""},
		{"zero is none", `{"sequence_id":0,"sequence_start":true}`, SequenceRef{Start: true}, ""},
		{"negative", `{"sequence_id":-1}`, SequenceRef{}, "sequence_id must be an unsigned integer or a string"},
		{"a fraction", `{"sequence_id":1.5}`, SequenceRef{}, "sequence_id must be an unsigned integer or a string"},
		{"a start that is not a bool", `{"sequence_id":1,"sequence_start":"yes"}`, SequenceRef{}, "sequence_start must be true or false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodeRequest([]byte(`{"parameters":`+tc.params+`,`+input+`}`), -1)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrBadRequest)
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, r.Sequence)
			require.Equal(t, tc.want.ID != "", r.Sequence.Given())
		})
	}
}

func TestGRPCSequenceParameters(t *testing.T) {
	u64 := func(v uint64) *pb.InferParameter {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: v}}
	}
	i64 := func(v int64) *pb.InferParameter {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: v}}
	}
	str := func(v string) *pb.InferParameter {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: v}}
	}
	yes := &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}
	tests := []struct {
		name   string
		params map[string]*pb.InferParameter
		want   SequenceRef
		err    string
	}{
		{"uint64 that starts", map[string]*pb.InferParameter{"sequence_id": u64(9), "sequence_start": yes}, SequenceRef{ID: "9", Numeric: true, Number: 9, Start: true}, ""},
		{"int64 that ends", map[string]*pb.InferParameter{"sequence_id": i64(9), "sequence_end": yes}, SequenceRef{ID: "9", Numeric: true, Number: 9, End: true}, ""},
		{"a string", map[string]*pb.InferParameter{"sequence_id": str("call-7")}, SequenceRef{ID: "call-7"}, ""},
		{"zero is none", map[string]*pb.InferParameter{"sequence_id": u64(0)}, SequenceRef{}, ""},
		{"negative", map[string]*pb.InferParameter{"sequence_id": i64(-2)}, SequenceRef{}, "sequence_id -2 is negative"},
		{"a bool ID", map[string]*pb.InferParameter{"sequence_id": yes}, SequenceRef{}, "sequence_id must be an unsigned integer or a string"},
		{"an end that is not a bool", map[string]*pb.InferParameter{"sequence_id": u64(1), "sequence_end": u64(1)}, SequenceRef{}, "sequence_end must be true or false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodeGRPCRequest(&pb.ModelInferRequest{ModelName: "m", Parameters: tc.params,
				Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "FP32", Shape: []int64{1},
					Contents: &pb.InferTensorContents{Fp32Contents: []float32{1}}}}})
			if tc.err != "" {
				require.ErrorIs(t, err, ErrBadRequest)
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, r.Sequence)
		})
	}
}
