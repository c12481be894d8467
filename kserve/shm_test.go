package kserve

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// fakeShm is one region "r" of 16 bytes.
type fakeShm struct{ mem []byte }

func (f *fakeShm) ReadRegion(region string, offset, size int64) ([]byte, error) {
	if region != "r" {
		return nil, errors.New("no region " + region)
	}
	if offset+size > int64(len(f.mem)) {
		return nil, fmt.Errorf("%d bytes at %d do not fit", size, offset)
	}
	return append([]byte(nil), f.mem[offset:offset+size]...), nil
}

func newFakeShm() *fakeShm {
	m := &fakeShm{mem: make([]byte, 16)}
	for i := range m.mem {
		m.mem[i] = byte(i)
	}
	return m
}

// Inputs and outputs placed in shared memory, over REST: the input's bytes
// come from the region (a copy), the output's place is kept for the
// daemon to write into; every malformed use is refused naming the tensor.
func TestDecodeRequestWithSharedMemory(t *testing.T) {
	shm := newFakeShm()
	r, err := DecodeRequestWith([]byte(`{"inputs": [{"name": "x", "datatype": "UINT8", "shape": [1, 4],
		"parameters": {"shared_memory_region": "r", "shared_memory_byte_size": 4, "shared_memory_offset": 8}}],
		"outputs": [{"name": "y", "parameters": {"shared_memory_region": "r", "shared_memory_byte_size": 8}}]}`), -1, shm)
	require.NoError(t, err)
	require.Equal(t, []byte{8, 9, 10, 11}, r.Inputs[0].Data)
	require.EqualValues(t, 4, r.ShmBytes, "what the daemon holds in its budget of bytes in flight")
	shm.mem[8] = 99
	require.Equal(t, byte(8), r.Inputs[0].Data[0], "copied out of the region")
	require.Equal(t, []OutputRequest{{Name: "y", Shm: &ShmRef{Region: "r", Size: 8}}}, r.Outputs)

	cases := []struct{ name, body, want string }{
		{"size without region", `{"inputs": [{"name": "x", "datatype": "UINT8", "shape": [4], "parameters": {"shared_memory_byte_size": 4}}]}`,
			`input "x": has shared_memory_byte_size without shared_memory_region`},
		{"region without size", `{"inputs": [{"name": "x", "datatype": "UINT8", "shape": [4], "parameters": {"shared_memory_region": "r"}}]}`,
			`input "x": has shared_memory_region without shared_memory_byte_size`},
		{"region and data", `{"inputs": [{"name": "x", "datatype": "UINT8", "shape": [4], "data": [1, 2, 3, 4], "parameters": {"shared_memory_region": "r", "shared_memory_byte_size": 4}}]}`,
			`input "x": has shared_memory_region and also data or binary_data_size`},
		{"size the shape does not need", `{"inputs": [{"name": "x", "datatype": "FP32", "shape": [4], "parameters": {"shared_memory_region": "r", "shared_memory_byte_size": 4}}]}`,
			`input "x": shared_memory_byte_size is 4 but the shape and data type need 16 bytes`},
		{"unknown region", `{"inputs": [{"name": "x", "datatype": "UINT8", "shape": [4], "parameters": {"shared_memory_region": "q", "shared_memory_byte_size": 4}}]}`,
			`input "x": no region q`},
		{"past the region", `{"inputs": [{"name": "x", "datatype": "UINT8", "shape": [4], "parameters": {"shared_memory_region": "r", "shared_memory_byte_size": 4, "shared_memory_offset": 14}}]}`,
			`input "x": 4 bytes at 14 do not fit`},
		{"negative offset", `{"inputs": [{"name": "x", "datatype": "UINT8", "shape": [4], "parameters": {"shared_memory_region": "r", "shared_memory_byte_size": 4, "shared_memory_offset": -1}}]}`,
			`must not be negative`},
		{"region not a string", `{"inputs": [{"name": "x", "datatype": "UINT8", "shape": [4], "parameters": {"shared_memory_region": 3, "shared_memory_byte_size": 4}}]}`,
			`shared_memory_region must be a string`},
		{"output half given", `{"inputs": [{"name": "x", "datatype": "UINT8", "shape": [4], "data": [1, 2, 3, 4]}], "outputs": [{"name": "y", "parameters": {"shared_memory_region": "r"}}]}`,
			`output "y": has shared_memory_region without shared_memory_byte_size`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeRequestWith([]byte(tc.body), -1, shm)
			require.ErrorIs(t, err, ErrBadRequest)
			require.ErrorContains(t, err, tc.want)
		})
	}

	_, err = DecodeRequest([]byte(`{"inputs": [{"name": "x", "datatype": "UINT8", "shape": [4], "parameters": {"shared_memory_region": "r", "shared_memory_byte_size": 4}}]}`), -1)
	require.ErrorContains(t, err, "shared memory is not served here", "without regions")
}

// An output written into shared memory is answered with its place, not its
// data, in both protocols; over gRPC it has no raw_output_contents entry.
func TestEncodeOutputsInSharedMemory(t *testing.T) {
	y, err := tensor.New("y", tensor.Uint8, []int64{2}, []byte{7, 8})
	require.NoError(t, err)
	z, err := tensor.New("z", tensor.Uint8, []int64{1}, []byte{5})
	require.NoError(t, err)
	outs := []Output{{Tensor: y, Shm: &ShmRef{Region: "r", Offset: 4, Size: 8}}, {Tensor: z, Binary: true}}

	body, n, err := encodeResponseBytes(InferResponseJSON{ModelName: "m"}, outs)
	require.NoError(t, err)
	require.Equal(t, `{"model_name":"m","outputs":[{"name":"y","shape":[2],"datatype":"UINT8","parameters":{"shared_memory_byte_size":2,"shared_memory_offset":4,"shared_memory_region":"r"}},{"name":"z","shape":[1],"datatype":"UINT8","parameters":{"binary_data_size":1}}]}`, string(body[:n]))
	require.Equal(t, []byte{5}, body[n:], "only z's bytes follow")

	res := EncodeGRPCResponse(InferResponseJSON{ModelName: "m"}, outs)
	require.Equal(t, [][]byte{{5}}, res.RawOutputContents)
	p := res.Outputs[0].Parameters
	require.Equal(t, "r", p[ParamShmRegion].GetStringParam())
	require.EqualValues(t, 2, p[ParamShmSize].GetInt64Param())
	require.EqualValues(t, 4, p[ParamShmOffset].GetInt64Param())
	require.Nil(t, res.Outputs[1].Parameters)
}

// Over gRPC, raw_input_contents holds the inputs not in shared memory, in
// their order.
func TestDecodeGRPCRequestWithSharedMemory(t *testing.T) {
	shm := newFakeShm()
	in := func(name string, p map[string]*pb.InferParameter) *pb.ModelInferRequest_InferInputTensor {
		return &pb.ModelInferRequest_InferInputTensor{Name: name, Datatype: "UINT8", Shape: []int64{2}, Parameters: p}
	}
	place := map[string]*pb.InferParameter{
		ParamShmRegion: {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "r"}},
		ParamShmSize:   {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 2}},
		ParamShmOffset: {ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: 2}},
	}
	m := &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{in("a", nil), in("b", place), in("c", nil)},
		RawInputContents: [][]byte{{1, 1}, {3, 3}},
		Outputs:          []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "y", Parameters: place}}}
	r, err := DecodeGRPCRequestWith(m, shm)
	require.NoError(t, err)
	require.Equal(t, []byte{1, 1}, r.Inputs[0].Data)
	require.Equal(t, []byte{2, 3}, r.Inputs[1].Data)
	require.EqualValues(t, 2, r.ShmBytes)
	require.Equal(t, []byte{3, 3}, r.Inputs[2].Data)
	require.Equal(t, &ShmRef{Region: "r", Offset: 2, Size: 2}, r.Outputs[0].Shm)

	m.RawInputContents = append(m.RawInputContents, []byte{4, 4})
	_, err = DecodeGRPCRequestWith(m, shm)
	require.ErrorContains(t, err, "raw_input_contents has 3 entries for 2 inputs not in shared memory")

	_, err = DecodeGRPCRequest(&pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{in("b", place)}})
	require.ErrorContains(t, err, `input "b": names a shared-memory region, but shared memory is not served here`)
}
