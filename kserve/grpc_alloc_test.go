package kserve

import (
	"runtime"
	"testing"

	"github.com/gpulet/gpuletd/executor/tensor"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// allocatedBy is how many bytes f allocates on the heap (the package's
// tests do not run in parallel, so nothing else allocates meanwhile to
// speak of).
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A shape may declare up to tensor.MaxElements values in a message of a few
// bytes: typed contents that do not hold them are refused before anything
// is reserved for them (the daemon reserved up to 16 GiB per such request).
func TestDecodeGRPCRefusesBeforeReservingTheShape(t *testing.T) {
	for _, dt := range []string{"BOOL", "INT8", "INT32", "INT64", "UINT16", "UINT64", "FP32", "FP64", "BYTES"} {
		t.Run(dt, func(t *testing.T) {
			req := typed("x", dt, []int64{tensor.MaxElements}, &pb.InferTensorContents{})
			var err error
			got := allocatedBy(func() { _, err = DecodeGRPCRequest(req) })
			require.ErrorIs(t, err, ErrBadRequest)
			require.ErrorContains(t, err, "holds 0 values but the shape needs 2147483648")
			require.Less(t, got, uint64(1<<20), "bytes allocated to refuse it")
		})
	}
}

// FuzzDecodeGRPCRequest feeds arbitrary ModelInferRequest messages: decoding
// must never panic, refuse with ErrBadRequest, keep what it accepts
// consistent, and allocate in proportion to the message, never to the
// shapes it declares.
func FuzzDecodeGRPCRequest(f *testing.F) {
	seeds := []*pb.ModelInferRequest{
		typed("x", "FP32", []int64{2}, &pb.InferTensorContents{Fp32Contents: []float32{1, 2}}),
		typed("x", "FP64", []int64{1 << 20}, &pb.InferTensorContents{Fp64Contents: []float64{1}}),
		typed("x", "BYTES", []int64{2}, &pb.InferTensorContents{BytesContents: [][]byte{[]byte("a"), nil}}),
		{Id: "r", Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "INT8", Shape: []int64{1, 4}}},
			RawInputContents: [][]byte{{1, 2, 3, 4}},
			Parameters:       map[string]*pb.InferParameter{"timeout": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 5000}}},
			Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "y", Parameters: map[string]*pb.InferParameter{
				ParamClassification: {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 3}}}}}},
	}
	for _, s := range seeds {
		b, err := proto.Marshal(s)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		var m pb.ModelInferRequest
		if proto.Unmarshal(msg, &m) != nil {
			return
		}
		requireBoundedDecode(t, len(msg), func() (*Request, error) { return DecodeGRPCRequest(&m) })
	})
}
