package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/gpulet/gpuletd/executor/cudart"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// Shared memory (Config.SharedMemory), as perf_analyzer's
// --shared-memory=system sends: the run writes the inputs once into a POSIX
// shared-memory object, registers it with the server as one region (Triton's
// system shared-memory extension) and sends requests that name where each
// input lies and where each output goes, so that no tensor travels in a
// body. Every request reads the same inputs and writes its outputs over
// the same bytes (a load generator does not read them). The region is
// unregistered and the object removed when the run ends. With
// Config.CUDASharedMemory (--shared-memory=cuda) the region is GPU memory
// the run allocates and registers by its CUDA IPC handle (Triton's CUDA
// shared-memory extension), freed at the end.

// shmDir is where POSIX shared-memory objects live on Linux.
const shmDir = "/dev/shm"

// shmAlign is the offset alignment of each tensor in the object.
const shmAlign = 64

// shmRegion is the region a run registered: a POSIX object (key, file) or
// GPU memory (gpu).
type shmRegion struct {
	name, key, file string
	size            int64
	gpu             *cudart.Memory
	handle          []byte // gpu's CUDA IPC handle
}

// extension is the path of the region's extension in the REST API.
func (r *shmRegion) extension() string {
	if r.gpu != nil {
		return "/v2/cudasharedmemory/region/"
	}
	return "/v2/systemsharedmemory/region/"
}

// shmTensor is where one tensor lies in the region.
type shmTensor struct {
	name, datatype string
	shape          []int64
	offset, size   int64
}

// setUpSharedMemory writes the inputs of p (a binary payload of model, as
// m describes it) into a new object, or with cfg.CUDASharedMemory into GPU
// memory, registers it at the server through ctl and returns the region,
// the REST payload and the gRPC request that use it.
func setUpSharedMemory(ctx context.Context, ctl control, cfg Config, m *Model, p *Payload) (*shmRegion, *Payload, *pb.ModelInferRequest, error) {
	model := cfg.Model
	req, err := kserve.DecodeRequest(p.Body, p.JSONLen)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %v", ErrPayload, err)
	}
	var ins, outs []shmTensor
	var size int64
	place := func(t shmTensor) shmTensor {
		t.offset = (size + shmAlign - 1) / shmAlign * shmAlign
		size = t.offset + t.size
		return t
	}
	for _, in := range req.Inputs {
		ins = append(ins, place(shmTensor{name: in.Name, datatype: string(in.DataType), shape: in.Shape, size: int64(len(in.Data))}))
	}
	var answered map[string]int64 // output sizes in an answer to p, when needed
	for _, o := range m.Metadata.Outputs {
		dt, err := tensor.ParseDataType(o.DataType)
		if err != nil || dt.Size() == 0 {
			return nil, nil, nil, fmt.Errorf("%w: output %q has data type %q; shared memory holds fixed-size types only", ErrPayload, o.Name, o.DataType)
		}
		var room int64
		if m.fixedShape(o.Shape) {
			shape, err := m.requestShape(o.Name, o.Shape)
			if err != nil {
				return nil, nil, nil, err
			}
			n, err := tensor.NumElements(shape)
			if err != nil || n > maxPayloadElements {
				return nil, nil, nil, fmt.Errorf("%w: output %q has shape %v, too large for shared memory", ErrPayload, o.Name, shape)
			}
			room = n * int64(dt.Size())
		} else {
			// Its size depends on the input (a pipeline's fan-out): every
			// request sends p's inputs, so an answer to p says it.
			if answered == nil {
				if answered, err = ctl.outputSizes(ctx, model, cfg.ModelVersion, p); err != nil {
					return nil, nil, nil, err
				}
			}
			var ok bool
			if room, ok = answered[o.Name]; !ok {
				return nil, nil, nil, fmt.Errorf("%w: output %q: the answer to a request has none", ErrPayload, o.Name)
			}
		}
		outs = append(outs, place(shmTensor{name: o.Name, size: room}))
	}
	obj := make([]byte, size)
	for i, in := range req.Inputs {
		copy(obj[ins[i].offset:], in.Data)
	}
	newRegion := newSystemRegion
	if cfg.CUDASharedMemory {
		newRegion = func(obj []byte) (*shmRegion, error) { return newCUDARegion(obj, cfg.CUDARuntime) }
	}
	r, err := newRegion(obj)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := ctl.register(ctx, r); err != nil {
		r.release()
		return nil, nil, nil, fmt.Errorf("register shared memory: %w", err)
	}
	payload, err := r.restPayload(ins, outs)
	if err != nil {
		r.tearDown(context.WithoutCancel(ctx), ctl)
		return nil, nil, nil, err
	}
	greq := r.grpcRequest(model, ins, outs)
	greq.ModelVersion = cfg.ModelVersion
	return r, payload, greq, nil
}

// outputSizes sends p once over REST to the model at path (ModelPath) and
// returns the bytes each output of the answer takes.
func outputSizes(ctx context.Context, client *http.Client, base, path string, p *Payload) (map[string]int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path+"/infer", bytes.NewReader(p.Body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	p.header(req.Header)
	code, body, msg, err := Call(ctx, client, req, maxAnswer)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("size the outputs for shared memory: a request was answered %d: %s", code, msg)
	}
	// A binary answer's JSON comes first: the decoder stops after it.
	var ans kserve.InferResponseJSON
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&ans); err != nil {
		return nil, fmt.Errorf("size the outputs for shared memory: read the answer: %w", err)
	}
	out := map[string]int64{}
	for _, o := range ans.Outputs {
		if err := sizeOutput(out, o.Name, o.DataType, o.Shape); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sizeOutput sets sizes[name] to the bytes an answered output of datatype
// and shape takes.
func sizeOutput(sizes map[string]int64, name, datatype string, shape []int64) error {
	dt, err := tensor.ParseDataType(datatype)
	n, nerr := tensor.NumElements(shape)
	if err != nil || nerr != nil || n > maxPayloadElements {
		return fmt.Errorf("%w: output %q answered with shape %v and data type %q", ErrPayload, name, shape, datatype)
	}
	sizes[name] = n * int64(dt.Size())
	return nil
}

// newSystemRegion writes obj into a new POSIX shared-memory object.
func newSystemRegion(obj []byte) (*shmRegion, error) {
	f, err := os.CreateTemp(shmDir, "gpuletd-load-*")
	if err != nil {
		return nil, fmt.Errorf("%w: make a shared-memory object: %v", ErrConfig, err)
	}
	r := &shmRegion{name: filepath.Base(f.Name()), key: "/" + filepath.Base(f.Name()), file: f.Name(), size: int64(len(obj))}
	_, err = f.Write(obj)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.release()
		return nil, fmt.Errorf("write shared-memory object %s: %w", r.file, err)
	}
	return r, nil
}

// newCUDARegion copies obj into GPU memory it allocates on device 0 with
// the CUDA runtime library lib.
func newCUDARegion(obj []byte, lib string) (*shmRegion, error) {
	gpu, err := cudart.Alloc(lib, 0, int64(len(obj)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	r := &shmRegion{name: fmt.Sprintf("gpuletd-load-cuda-%d-%d", os.Getpid(), time.Now().UnixNano()), size: int64(len(obj)), gpu: gpu}
	r.handle, err = gpu.Handle()
	if err == nil {
		err = gpu.WriteAt(obj, 0)
	}
	if err != nil {
		r.release()
		return nil, err
	}
	return r, nil
}

// registerJSON is the body of r's REST register request.
func (r *shmRegion) registerJSON() map[string]any {
	if r.gpu != nil {
		return map[string]any{"raw_handle": map[string]any{"b64": r.handle}, "device_id": 0, "byte_size": r.size}
	}
	return map[string]any{"key": r.key, "offset": 0, "byte_size": r.size}
}

// release removes the object or frees the GPU memory.
func (r *shmRegion) release() {
	if r.gpu != nil {
		_ = r.gpu.Close()
		return
	}
	_ = os.Remove(r.file)
}

// params are the parameters that place a tensor in the region.
func (r *shmRegion) params(t shmTensor) kserve.Parameters {
	return kserve.Parameters{
		kserve.ParamShmRegion: jsontext.Value(strconv.Quote(r.name)),
		kserve.ParamShmSize:   jsontext.Value(strconv.FormatInt(t.size, 10)),
		kserve.ParamShmOffset: jsontext.Value(strconv.FormatInt(t.offset, 10)),
	}
}

// restPayload is a JSON request whose tensors all lie in the region.
func (r *shmRegion) restPayload(ins, outs []shmTensor) (*Payload, error) {
	req := kserve.InferRequestJSON{}
	for _, t := range ins {
		req.Inputs = append(req.Inputs, kserve.RequestInput{Name: t.name, Shape: t.shape, DataType: t.datatype, Parameters: r.params(t)})
	}
	for _, t := range outs {
		req.Outputs = append(req.Outputs, kserve.RequestOutput{Name: t.name, Parameters: r.params(t)})
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	return &Payload{Body: body, JSONLen: -1}, nil
}

// grpcRequest is the same request for ModelInfer.
func (r *shmRegion) grpcRequest(model string, ins, outs []shmTensor) *pb.ModelInferRequest {
	params := func(t shmTensor) map[string]*pb.InferParameter {
		return map[string]*pb.InferParameter{
			kserve.ParamShmRegion: {ParameterChoice: &pb.InferParameter_StringParam{StringParam: r.name}},
			kserve.ParamShmSize:   {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: t.size}},
			kserve.ParamShmOffset: {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: t.offset}},
		}
	}
	out := &pb.ModelInferRequest{ModelName: model}
	for _, t := range ins {
		out.Inputs = append(out.Inputs, &pb.ModelInferRequest_InferInputTensor{Name: t.name, Datatype: t.datatype, Shape: t.shape, Parameters: params(t)})
	}
	for _, t := range outs {
		out.Outputs = append(out.Outputs, &pb.ModelInferRequest_InferRequestedOutputTensor{Name: t.name, Parameters: params(t)})
	}
	return out
}

// tearDown unregisters the region (5 s at most) and removes the object or
// frees the GPU memory.
func (r *shmRegion) tearDown(ctx context.Context, ctl control) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = ctl.unregister(ctx, r)
	r.release()
}

// post sends body and wants 200; another answer is an error with the
// server's message.
func post(ctx context.Context, client *http.Client, u string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	code, _, msg, err := Call(ctx, client, req, 1<<20)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("post %s: %d %s: %s", u, code, http.StatusText(code), msg)
	}
	return nil
}
