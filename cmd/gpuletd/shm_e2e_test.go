package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// Triton's system shared-memory extension end to end, as a local client
// uses it: a POSIX shared-memory object holds mlp's input and receives its
// output, registered as two regions over REST; inference over REST and over
// gRPC reads the input from one and writes the output into the other, with
// the same result as a request that carries its tensors; misuse is refused
// naming what is wrong, and unregistering leaves nothing registered.
func TestSystemSharedMemory(t *testing.T) {
	base, grpcAddr := shmDaemon(t)

	want := mlpReference(t, base)
	key := fmt.Sprintf("/gpuletd-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())
	file, obj := mlpShmObject(t, key[1:])
	output := func() []float32 { return mlpShmOutput(t, file) }

	r := do(t, "POST", base+"/v2/systemsharedmemory/region/in/register", []byte(fmt.Sprintf(`{"key": %q, "offset": 0, "byte_size": 3136}`, key)), nil)
	require.Equal(t, 200, r.code, string(r.body))
	r = do(t, "POST", base+"/v2/systemsharedmemory/region/out/register", []byte(fmt.Sprintf(`{"key": %q, "offset": 3200, "byte_size": 64}`, key)), nil)
	require.Equal(t, 200, r.code, string(r.body))
	r = do(t, "POST", base+"/v2/systemsharedmemory/region/out/register", []byte(fmt.Sprintf(`{"key": %q, "offset": 0, "byte_size": 8}`, key)), nil)
	require.Equal(t, 400, r.code, "a name registered twice")
	r = do(t, "POST", base+"/v2/systemsharedmemory/region/etc/register", []byte(`{"key": "/../etc/passwd", "offset": 0, "byte_size": 8}`), nil)
	require.Equal(t, 400, r.code)
	require.Contains(t, string(r.body), "is not a shared-memory object name")
	r = do(t, "GET", base+"/v2/systemsharedmemory/status", nil, nil)
	require.Equal(t, 200, r.code)
	require.JSONEq(t, fmt.Sprintf(`[{"name": "in", "key": %q, "offset": 0, "byte_size": 3136}, {"name": "out", "key": %q, "offset": 3200, "byte_size": 64}]`, key, key), string(r.body))

	infer := func(in, out string, outSize int) httpResult {
		return do(t, "POST", base+"/v2/models/mlp/infer", []byte(fmt.Sprintf(`{"inputs": [{"name": "input", "shape": [1, 784], "datatype": "FP32",
			"parameters": {"shared_memory_region": %q, "shared_memory_byte_size": 3136}}],
			"outputs": [{"name": "output", "parameters": {"shared_memory_region": %q, "shared_memory_byte_size": %d}}]}`, in, out, outSize)), nil)
	}
	r = infer("in", "out", 64)
	require.Equal(t, 200, r.code, string(r.body))
	require.JSONEq(t, `{"model_name": "mlp", "model_version": "1", "outputs": [{"name": "output", "shape": [1, 10], "datatype": "FP32",
		"parameters": {"shared_memory_region": "out", "shared_memory_byte_size": 40}}]}`, string(r.body))
	require.InDeltaSlice(t, want, output(), 1e-5, "the output written into the region")

	r = infer("nosuch", "out", 64)
	require.Equal(t, 400, r.code)
	require.Contains(t, string(r.body), `input \"input\": no shared-memory region of that name is registered: \"nosuch\"`)
	r = infer("in", "out", 8)
	require.Equal(t, 400, r.code)
	require.Contains(t, string(r.body), "the output takes 40 bytes but shared_memory_byte_size gives it 8")

	// gRPC, into a cleared output region.
	require.NoError(t, os.WriteFile(file, append(obj[:mlpOutputAt:mlpOutputAt], make([]byte, 64)...), 0o600))
	c, ctx := inferenceClient(t, grpcAddr, time.Minute)
	sm, err := c.ServerMetadata(ctx, &pb.ServerMetadataRequest{})
	require.NoError(t, err)
	require.Contains(t, sm.Extensions, "system_shared_memory")
	place := func(region string, size int64) map[string]*pb.InferParameter { return shmPlace(region, 0, size) }
	res, err := c.ModelInfer(ctx, &pb.ModelInferRequest{ModelName: "mlp",
		Inputs:  []*pb.ModelInferRequest_InferInputTensor{{Name: "input", Datatype: "FP32", Shape: []int64{1, 784}, Parameters: place("in", 3136)}},
		Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "output", Parameters: place("out", 64)}}})
	require.NoError(t, err)
	require.Empty(t, res.RawOutputContents)
	require.Equal(t, "out", res.Outputs[0].Parameters["shared_memory_region"].GetStringParam())
	require.InDeltaSlice(t, want, output(), 1e-5)

	st, err := c.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{})
	require.NoError(t, err)
	require.Len(t, st.Regions, 2)
	require.EqualValues(t, 3200, st.Regions["out"].Offset)
	_, err = c.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{Name: "in"})
	require.NoError(t, err)
	_, err = c.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{Name: "in"})
	requireCode(t, err, codes.NotFound, "no shared-memory region of that name")
	_, err = c.SystemSharedMemoryRegister(ctx, &pb.SystemSharedMemoryRegisterRequest{Name: "in", Key: key, ByteSize: 3136})
	require.NoError(t, err, "registered again over gRPC")
	r = do(t, "POST", base+"/v2/systemsharedmemory/unregister", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	r = do(t, "GET", base+"/v2/systemsharedmemory/status", nil, nil)
	require.JSONEq(t, `[]`, string(r.body))
}

// TestLoadOverSharedMemory drives the daemon with gpuletd load --shm over
// REST and over gRPC: every request is answered with its tensors in a
// registered region, and the run leaves no region registered and no object
// behind.
func TestLoadOverSharedMemory(t *testing.T) {
	base, grpcAddr := shmDaemon(t)
	objects := func() []string {
		m, err := filepath.Glob("/dev/shm/gpuletd-load-*")
		require.NoError(t, err)
		return m
	}
	before := objects()
	for _, via := range [][]string{nil, {"--grpc", grpcAddr}} {
		rep := loadAllAnswered(t, append([]string{"--model", "mlp", "--url", base, "--rate", "40", "--duration", "1s", "--shm"}, via...)...)
		require.True(t, rep.SharedMemory)
		if via == nil {
			require.Less(t, rep.RequestBytes, 1024, "no tensor travels in the body (mlp's input alone is 3 136 bytes)")
		}
		r := do(t, "GET", base+"/v2/systemsharedmemory/status", nil, nil)
		require.Equal(t, 200, r.code)
		require.JSONEq(t, `[]`, string(r.body), "the run unregistered its region")
		require.Equal(t, before, objects(), "and removed its object")
	}
}

// shmDaemon starts the CPU zoo daemon with a gRPC listener for the shared
// memory tests, clients' shared memory allowed (allow_client_shm), which skip in -short and where there is no /dev/shm. It
// returns the REST base URL and the gRPC address.
func shmDaemon(t *testing.T) (base, grpcAddr string) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	if _, err := os.Stat("/dev/shm"); err != nil {
		t.Skip("no /dev/shm on this machine")
	}
	grpcAddr = freeAddr(t)
	_, base = cpuZooDaemon(t, "GPULETD_GRPC_LISTEN="+grpcAddr, "GPULETD_ALLOW_CLIENT_SHM=true")
	return base, grpcAddr
}

// loadReport is what the shared-memory tests read of gpuletd load --json.
type loadReport struct {
	Sent, OK         int64
	Failed           map[string]int64 `json:"failed"`
	FirstError       string           `json:"first_error"`
	SharedMemory     bool             `json:"shared_memory"`
	CUDASharedMemory bool             `json:"cuda_shared_memory"`
	RequestBytes     int              `json:"request_bytes"`
}

// loadAllAnswered runs gpuletd load --json with args and requires that it
// sent requests and every one was answered.
func loadAllAnswered(t *testing.T, args ...string) loadReport {
	t.Helper()
	code, out, stderr := runCLI(t, append([]string{"load", "--json"}, args...)...)
	require.Equal(t, 0, code, stderr)
	var load struct {
		Report loadReport `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &load))
	require.Positive(t, load.Report.Sent)
	require.Equal(t, load.Report.Sent, load.Report.OK, "every request answered: %v %s", load.Report.Failed, load.Report.FirstError)
	return load.Report
}

// Where the shared-memory tests place mlp's tensors in one object of
// mlpObjectSize bytes: its input (mlpJSON(1)'s values, 3 136 bytes) at 0,
// room for its output (40 bytes) at mlpOutputAt.
const (
	mlpOutputAt   = 3200
	mlpObjectSize = 3264
)

// mlpReference is what mlp answers to mlpJSON(1)'s input carried in the
// request.
func mlpReference(t *testing.T, base string) []float32 {
	t.Helper()
	r := do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(1), nil)
	require.Equal(t, 200, r.code, string(r.body))
	var ref struct {
		Outputs []struct {
			Data []float32 `json:"data"`
		} `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal(r.body, &ref))
	require.Len(t, ref.Outputs[0].Data, 10)
	return ref.Outputs[0].Data
}

// mlpShmObject writes the shared-memory object /dev/shm/name with mlp's
// input at 0, removed when the test ends; it returns its file and bytes.
func mlpShmObject(t *testing.T, name string) (string, []byte) {
	t.Helper()
	file := filepath.Join("/dev/shm", name)
	obj := make([]byte, mlpObjectSize)
	for i := range 784 { // the values mlpJSON sends, as it rounds them
		f, err := strconv.ParseFloat(strconv.FormatFloat(float64(i%7)/7, 'f', 3, 32), 32)
		require.NoError(t, err)
		binary.LittleEndian.PutUint32(obj[4*i:], math.Float32bits(float32(f)))
	}
	require.NoError(t, os.WriteFile(file, obj, 0o600))
	t.Cleanup(func() { _ = os.Remove(file) })
	return file, obj
}

// mlpShmOutput reads mlp's output from its place in the object file.
func mlpShmOutput(t *testing.T, file string) []float32 {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	out := make([]float32, 10)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[mlpOutputAt+4*i:]))
	}
	return out
}

// shmPlace are the gRPC parameters that place a tensor in a region.
func shmPlace(region string, offset, size int64) map[string]*pb.InferParameter {
	p := map[string]*pb.InferParameter{
		"shared_memory_region":    {ParameterChoice: &pb.InferParameter_StringParam{StringParam: region}},
		"shared_memory_byte_size": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: size}},
	}
	if offset != 0 {
		p["shared_memory_offset"] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: offset}}
	}
	return p
}
