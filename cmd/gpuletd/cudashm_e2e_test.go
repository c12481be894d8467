package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// Triton's CUDA shared-memory extension end to end, with the daemon's CUDA
// runtime replaced at the hardware edge: a libcudart built from
// executor/cudart/testdata/fakeipc.c, whose IPC handles name POSIX
// shared-memory objects that stand for device memory. The daemon finds it
// in onnxruntime.cuda_library_dirs as it finds the real one, opens the
// handles and copies mlp's input out of one region and its output into
// another over REST and gRPC; the answer is the same as a request's that
// carries its tensors, and misuse is refused naming what is wrong.
func TestCUDASharedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	if _, err := os.Stat("/dev/shm"); err != nil {
		t.Skip("no /dev/shm on this machine")
	}
	libDir := t.TempDir()
	out, err := exec.Command("cc", "-shared", "-fPIC", "-o", filepath.Join(libDir, "libcudart.so.13"),
		"../../executor/cudart/testdata/fakeipc.c", "-lrt").CombinedOutput()
	require.NoError(t, err, string(out))
	grpcAddr := freeAddr(t)
	_, base := cpuZooDaemon(t, "GPULETD_GRPC_LISTEN="+grpcAddr, "GPULETD_ONNXRUNTIME_CUDA_LIBRARY_DIRS="+libDir, "GPULETD_ALLOW_CLIENT_SHM=true")

	want := mlpReference(t, base)
	// The "device memory": mlp's input at 0, room for its output at 3200.
	name := fmt.Sprintf("gpuletd-cuda-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())
	file, mem := mlpShmObject(t, name)
	handle := make([]byte, 64) // what cudaIpcGetMemHandle would give: here the object's name
	copy(handle, "/"+name)
	output := func() []float32 { return mlpShmOutput(t, file) }

	register := func(region string, device, size int, h []byte) httpResult {
		return do(t, "POST", base+"/v2/cudasharedmemory/region/"+region+"/register",
			[]byte(fmt.Sprintf(`{"raw_handle": {"b64": %q}, "device_id": %d, "byte_size": %d}`, base64.StdEncoding.EncodeToString(h), device, size)), nil)
	}
	r := register("gpu", 0, 3264, handle)
	require.Equal(t, 200, r.code, string(r.body))
	for _, tc := range []struct {
		name   string
		device int
		handle []byte
		want   string
	}{
		{"another device", 1, handle, "invalid device ordinal"},
		{"a handle nobody made", 0, make([]byte, 64), "open the IPC handle"},
		{"not a handle", 0, handle[:16], "raw_handle has 16 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := register("bad", tc.device, 8, tc.handle)
			require.Equal(t, 400, r.code, string(r.body))
			require.Contains(t, string(r.body), tc.want)
		})
	}
	r = do(t, "GET", base+"/v2/cudasharedmemory/status", nil, nil)
	require.Equal(t, 200, r.code)
	require.JSONEq(t, `[{"name": "gpu", "device_id": 0, "byte_size": 3264}]`, string(r.body))
	r = do(t, "GET", base+"/v2/systemsharedmemory/status", nil, nil)
	require.JSONEq(t, `[]`, string(r.body), "a CUDA region is not a system one")

	r = do(t, "POST", base+"/v2/models/mlp/infer", []byte(`{"inputs": [{"name": "input", "shape": [1, 784], "datatype": "FP32",
		"parameters": {"shared_memory_region": "gpu", "shared_memory_byte_size": 3136}}],
		"outputs": [{"name": "output", "parameters": {"shared_memory_region": "gpu", "shared_memory_offset": 3200, "shared_memory_byte_size": 64}}]}`), nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.JSONEq(t, `{"model_name": "mlp", "model_version": "1", "outputs": [{"name": "output", "shape": [1, 10], "datatype": "FP32",
		"parameters": {"shared_memory_region": "gpu", "shared_memory_offset": 3200, "shared_memory_byte_size": 40}}]}`, string(r.body))
	require.InDeltaSlice(t, want, output(), 1e-5, "the output copied into the device memory")
	r = do(t, "POST", base+"/v2/models/mlp/infer", []byte(`{"inputs": [{"name": "input", "shape": [1, 784], "datatype": "FP32",
		"parameters": {"shared_memory_region": "gpu", "shared_memory_offset": 3200, "shared_memory_byte_size": 3136}}]}`), nil)
	require.Equal(t, 400, r.code)
	require.Contains(t, string(r.body), `3136 bytes at offset 3200 do not fit region \"gpu\" (3264 bytes)`)

	// gRPC: a second region on the same memory, the output cleared first.
	require.NoError(t, os.WriteFile(file, append(mem[:mlpOutputAt:mlpOutputAt], make([]byte, 64)...), 0o600))
	c, ctx := inferenceClient(t, grpcAddr, time.Minute)
	sm, err := c.ServerMetadata(ctx, &pb.ServerMetadataRequest{})
	require.NoError(t, err)
	require.Contains(t, sm.Extensions, "cuda_shared_memory")
	_, err = c.CudaSharedMemoryRegister(ctx, &pb.CudaSharedMemoryRegisterRequest{Name: "gpu", RawHandle: handle, ByteSize: 8})
	requireCode(t, err, codes.AlreadyExists, "already registered")
	_, err = c.CudaSharedMemoryRegister(ctx, &pb.CudaSharedMemoryRegisterRequest{Name: "gpu2", RawHandle: handle, ByteSize: 3264})
	require.NoError(t, err)
	place := shmPlace
	res, err := c.ModelInfer(ctx, &pb.ModelInferRequest{ModelName: "mlp",
		Inputs:  []*pb.ModelInferRequest_InferInputTensor{{Name: "input", Datatype: "FP32", Shape: []int64{1, 784}, Parameters: place("gpu2", 0, 3136)}},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "output", Parameters: place("gpu2", 3200, 64)}}})
	require.NoError(t, err)
	require.Empty(t, res.RawOutputContents)
	require.InDeltaSlice(t, want, output(), 1e-5)

	st, err := c.CudaSharedMemoryStatus(ctx, &pb.CudaSharedMemoryStatusRequest{})
	require.NoError(t, err)
	require.Len(t, st.Regions, 2)
	require.EqualValues(t, 3264, st.Regions["gpu2"].ByteSize)
	_, err = c.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{Name: "gpu"})
	requireCode(t, err, codes.NotFound, "no system shared-memory region")
	_, err = c.CudaSharedMemoryUnregister(ctx, &pb.CudaSharedMemoryUnregisterRequest{Name: "gpu"})
	require.NoError(t, err)
	_, err = c.CudaSharedMemoryStatus(ctx, &pb.CudaSharedMemoryStatusRequest{Name: "gpu"})
	requireCode(t, err, codes.NotFound, "no CUDA shared-memory region")
	r = do(t, "POST", base+"/v2/cudasharedmemory/unregister", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	r = do(t, "GET", base+"/v2/cudasharedmemory/status", nil, nil)
	require.JSONEq(t, `[]`, string(r.body))

	// gpuletd load --cuda-shm, over REST and gRPC: the generator allocates
	// the "GPU memory" itself with the runtime it finds in LD_LIBRARY_PATH.
	t.Setenv("LD_LIBRARY_PATH", libDir)
	mine := func() []string {
		m, err := filepath.Glob(fmt.Sprintf("/dev/shm/fakecudart-%d-*", os.Getpid()))
		require.NoError(t, err)
		return m
	}
	for _, via := range [][]string{nil, {"--grpc", grpcAddr}} {
		rep := loadAllAnswered(t, append([]string{"--model", "mlp", "--url", base, "--rate", "40", "--duration", "1s", "--cuda-shm"}, via...)...)
		require.True(t, rep.CUDASharedMemory)
		if via == nil {
			require.Less(t, rep.RequestBytes, 1024, "no tensor travels in the body")
		}
		r = do(t, "GET", base+"/v2/cudasharedmemory/status", nil, nil)
		require.JSONEq(t, `[]`, string(r.body), "the run unregistered its region")
		require.Empty(t, mine(), "and freed its memory")
	}
	code, _, stderr := runCLI(t, "load", "--model", "mlp", "--url", base, "--rate", "40", "--duration", "1s", "--cuda-shm", "--shm")
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "not both")
}
