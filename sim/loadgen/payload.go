package loadgen

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// ErrPayload is wrapped when no request can be built for a model.
var ErrPayload = errors.New("cannot build a request")

// maxPayloadElements bounds the elements of one generated input.
const maxPayloadElements = 1 << 26

// Payload is one inference request body, sent unchanged every time.
type Payload struct {
	// Body is the request body.
	Body []byte
	// JSONLen is the length of the JSON part of a binary-tensor body (the
	// Inference-Header-Content-Length header), or -1 for a JSON body.
	JSONLen int64
}

// header sets the request headers the payload needs.
func (p *Payload) header(h http.Header) {
	if p.JSONLen >= 0 {
		h.Set("Content-Type", "application/octet-stream")
		h.Set(kserve.HeaderContentLength, strconv.FormatInt(p.JSONLen, 10))
		return
	}
	h.Set("Content-Type", "application/json")
}

// NewPayload builds a request for model m with random inputs of the
// declared shapes: dimension 0 is 1 when the model batches, and any other
// open dimension (-1) is 1 too. Floats are uniform in [0, 1), integers in
// [0, 10), booleans fair coins; the seed fixes them. With bin the inputs
// travel as binary tensors and the outputs are asked for as binary.
func NewPayload(m *Model, bin bool, seed uint64) (*Payload, error) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	req := kserve.InferRequestJSON{Inputs: make([]kserve.RequestInput, 0, len(m.Metadata.Inputs))}
	var raw []byte
	for _, in := range m.Metadata.Inputs {
		dt, err := tensor.ParseDataType(in.DataType)
		if err != nil || dt.Size() == 0 {
			return nil, fmt.Errorf("%w: input %q has data type %q; BYTES inputs are not generated, only fixed-size types", ErrPayload, in.Name, in.DataType)
		}
		shape := m.requestShape(in.Shape)
		n, err := tensor.NumElements(shape)
		if err != nil || n > maxPayloadElements {
			return nil, fmt.Errorf("%w: input %q has shape %v, too large to generate", ErrPayload, in.Name, shape)
		}
		ri := kserve.RequestInput{Name: in.Name, Shape: shape, DataType: in.DataType}
		if bin {
			data := randomBytes(rng, dt, int(n))
			ri.Parameters = kserve.Parameters{"binary_data_size": jsontext.Value(strconv.Itoa(len(data)))}
			raw = append(raw, data...)
		} else {
			ri.Data = jsontext.Value(randomJSON(rng, dt, int(n)))
		}
		req.Inputs = append(req.Inputs, ri)
	}
	if len(req.Inputs) == 0 {
		return nil, fmt.Errorf("%w: the model declares no inputs", ErrPayload)
	}
	if bin {
		req.Parameters = kserve.Parameters{"binary_data_output": jsontext.Value("true")}
	}
	head, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	if !bin {
		return &Payload{Body: head, JSONLen: -1}, nil
	}
	return &Payload{Body: append(head, raw...), JSONLen: int64(len(head))}, nil
}

// requestShape is a declared shape as one request of batch 1 has it:
// dimension 0 is 1 when the model batches, and any other open dimension
// (-1) is 1 too.
func (m *Model) requestShape(declared []int64) []int64 {
	shape := slices.Clone(declared)
	for d := range shape {
		if shape[d] < 0 || (d == 0 && m.MaxBatchSize > 0) {
			shape[d] = 1
		}
	}
	return shape
}

// value draws one element as a float64: uniform in [0, 1) for floats, an
// integer in [0, 10), 0 or 1 for booleans.
func value(rng *rand.Rand, dt tensor.DataType) float64 {
	switch dt {
	case tensor.FP16:
		return float64(rng.IntN(1024)) / 1024 // exact in half precision
	case tensor.BF16:
		return float64(rng.IntN(128)) / 128 // exact in bfloat16's 8 significant bits
	case tensor.FP32, tensor.FP64:
		return rng.Float64()
	case tensor.Bool:
		return float64(rng.IntN(2))
	}
	return float64(rng.IntN(10))
}

// randomJSON writes n random elements as a flat JSON array.
func randomJSON(rng *rand.Rand, dt tensor.DataType, n int) json.RawMessage {
	out := make([]byte, 0, 8*n+2)
	out = append(out, '[')
	for i := range n {
		if i > 0 {
			out = append(out, ',')
		}
		v := value(rng, dt)
		switch dt {
		case tensor.Bool:
			out = strconv.AppendBool(out, v != 0)
		case tensor.FP32:
			out = strconv.AppendFloat(out, float64(float32(v)), 'g', -1, 32)
		case tensor.FP16, tensor.BF16, tensor.FP64:
			out = strconv.AppendFloat(out, v, 'g', -1, 64)
		default:
			out = strconv.AppendInt(out, int64(v), 10)
		}
	}
	return append(out, ']')
}

// randomBytes writes n random elements in the little-endian layout of the
// binary tensor extension.
func randomBytes(rng *rand.Rand, dt tensor.DataType, n int) []byte {
	size := dt.Size()
	out := make([]byte, n*size)
	for i := range n {
		v, b := value(rng, dt), out[i*size:(i+1)*size]
		switch dt {
		case tensor.FP16:
			binary.LittleEndian.PutUint16(b, half(v))
		case tensor.BF16: // the upper half of the float32
			binary.LittleEndian.PutUint16(b, uint16(math.Float32bits(float32(v))>>16))
		case tensor.FP32:
			binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v)))
		case tensor.FP64:
			binary.LittleEndian.PutUint64(b, math.Float64bits(v))
		default: // integers and booleans: the value in the element's width
			u := uint64(v)
			for j := range b {
				b[j] = byte(u >> (8 * j))
			}
		}
	}
	return out
}

// half encodes k/1024 (0 ≤ k < 1024), which value draws for FP16, as an
// IEEE half: exact, since every such value is 0 or normal in half precision.
func half(v float64) uint16 {
	if v == 0 {
		return 0
	}
	bits := math.Float32bits(float32(v))
	exp := int((bits>>23)&0xff) - 127 + 15
	return uint16(exp)<<10 | uint16((bits>>13)&0x3ff)
}

// GRPCRequest is the payload as a gRPC ModelInfer request for model: the
// same inputs, in raw_input_contents.
func (p *Payload) GRPCRequest(model string) (*pb.ModelInferRequest, error) {
	req, err := kserve.DecodeRequest(p.Body, p.JSONLen)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPayload, err)
	}
	out := &pb.ModelInferRequest{ModelName: model}
	for _, t := range req.Inputs {
		out.Inputs = append(out.Inputs, &pb.ModelInferRequest_InferInputTensor{Name: t.Name, Datatype: string(t.DataType), Shape: t.Shape})
		out.RawInputContents = append(out.RawInputContents, t.Data)
	}
	return out, nil
}
