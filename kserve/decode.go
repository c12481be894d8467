package kserve

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// OutputRequest is one output the client asked for: as binary data, or
// written into a shared-memory region (Shm).
type OutputRequest struct {
	Name   string
	Binary bool
	Shm    *ShmRef
	// Classes is the classification parameter: answer with this many
	// classes (Classify) instead of the tensor; 0 for the tensor.
	Classes int
}

// Request is a decoded, checked inference request.
type Request struct {
	ID         string
	Inputs     []tensor.Tensor
	Outputs    []OutputRequest // empty: all outputs
	Parameters Parameters
	// BinaryOutputs is the request-level binary_data_output parameter: every
	// output not asked for otherwise travels as binary data.
	BinaryOutputs bool
	// Timeout is the "timeout" parameter (µs in the protocol); 0 when absent.
	Timeout time.Duration
	// Priority is the "priority" parameter: the request's priority level
	// among its model's, 1 the highest; 0 when absent (the model's default
	// level).
	Priority int64
	// Sequence is the request's place in a stateful model's sequence.
	Sequence SequenceRef
	// DecodedBytes counts the input bytes decoded from JSON values or typed
	// gRPC contents and ShmBytes those copied out of shared memory: what the
	// request's inputs hold beside its body or message (binary data and
	// raw_input_contents are the message's own bytes).
	DecodedBytes, ShmBytes int64
}

// DecodeRequest decodes an inference request body. jsonLen is the value of
// the Inference-Header-Content-Length header, or -1 when the header is
// absent (the whole body is JSON). Errors wrap ErrBadRequest and say what is
// wrong with which input. A tensor placed in shared memory is refused:
// DecodeRequestWith reads those.
func DecodeRequest(body []byte, jsonLen int64) (*Request, error) {
	return DecodeRequestWith(body, jsonLen, nil)
}

// DecodeRequestWith is DecodeRequest where inputs may be placed in the
// system shared-memory regions of shm (copied out here) and outputs asked
// for in them.
func DecodeRequestWith(body []byte, jsonLen int64, shm SharedMemory) (*Request, error) {
	bad := func(format string, args ...any) (*Request, error) {
		return nil, fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, args...))
	}
	head, bin := body, []byte(nil)
	if jsonLen >= 0 {
		if jsonLen > int64(len(body)) {
			return bad("%s is %d but the body has %d bytes", HeaderContentLength, jsonLen, len(body))
		}
		head, bin = body[:jsonLen], body[jsonLen:]
	}
	// encoding/json/v2 semantics (go-json-experiment): unknown members and
	// trailing content are errors, and it is several times faster than
	// encoding/json on large data arrays, which it only delimits here.
	var env InferRequestJSON
	if err := jsonv2.Unmarshal(head, &env, jsonv2.RejectUnknownMembers(true)); err != nil {
		return bad("request is not valid JSON for an inference request: %s", jsonErr(err))
	}
	if len(env.Inputs) == 0 {
		return bad("request has no inputs")
	}
	r := &Request{ID: env.ID, Parameters: env.Parameters}
	if err := r.readParameters(env.Parameters); err != nil {
		return nil, err
	}
	for i, in := range env.Inputs {
		t, rest, err := decodeInput(in, bin, shm, r)
		if err := r.addInput(i, in.Name, t, err); err != nil {
			return nil, err
		}
		bin = rest
	}
	if len(bin) > 0 {
		return bad("%d bytes of binary data are left over after the inputs' binary_data_size", len(bin))
	}
	for _, o := range env.Outputs {
		if err := r.checkOutputName(o.Name); err != nil {
			return nil, err
		}
		b, _, err := boolParam(o.Parameters, "binary_data")
		if err != nil {
			return bad("output %q: %s", o.Name, err)
		}
		if _, found := o.Parameters["binary_data"]; !found {
			b = r.BinaryOutputs
		}
		out := OutputRequest{Name: o.Name, Binary: b}
		ref, inShm, err := jsonShmRef(o.Parameters)
		if out.Shm, err = outputShm(shm, ref, inShm, err); err != nil {
			return bad("output %q: %s", o.Name, err)
		}
		classes, found, err := intParam(o.Parameters, ParamClassification)
		if err == nil && found {
			err = out.classify(classes)
		}
		if err != nil {
			return bad("output %q: %s", o.Name, err)
		}
		r.Outputs = append(r.Outputs, out)
	}
	return r, nil
}

// classify takes an output's classification parameter: a count from 1 up,
// for an output not written into shared memory.
func (o *OutputRequest) classify(classes int64) error {
	switch {
	case classes < 1 || classes > math.MaxInt32:
		return fmt.Errorf("%s must be a count of classes from 1, not %d", ParamClassification, classes)
	case o.Shm != nil:
		return fmt.Errorf("%s and %s cannot be combined: classes are answered in the response", ParamClassification, ParamShmRegion)
	}
	o.Classes = int(classes)
	return nil
}

// addInput adds a decoded input, or fails naming it (by position when it
// has no name); an input given twice fails. Both protocols decode through
// it.
func (r *Request) addInput(i int, name string, t tensor.Tensor, err error) error {
	if err != nil {
		return inputError(i, name, err)
	}
	if slices.ContainsFunc(r.Inputs, func(x tensor.Tensor) bool { return x.Name == t.Name }) {
		return fmt.Errorf("%w: input %q given twice", ErrBadRequest, t.Name)
	}
	r.Inputs = append(r.Inputs, t)
	return nil
}

// inputError says what is wrong with input i, named (by position when it
// has no name).
func inputError(i int, name string, err error) error {
	if name == "" {
		name = "#" + strconv.Itoa(i)
	}
	return fmt.Errorf("%w: input %q: %s", ErrBadRequest, name, err)
}

// checkOutputName refuses an output asked for without a name or twice.
func (r *Request) checkOutputName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: an output has no name", ErrBadRequest)
	}
	if slices.ContainsFunc(r.Outputs, func(o OutputRequest) bool { return o.Name == name }) {
		return fmt.Errorf("%w: output %q asked for twice", ErrBadRequest, name)
	}
	return nil
}

func (r *Request) readParameters(p Parameters) error {
	if err := checkReservedKeys(p); err != nil {
		return err
	}
	var err error
	if r.BinaryOutputs, _, err = boolParam(p, "binary_data_output"); err != nil {
		return fmt.Errorf("%w: parameters: %s", ErrBadRequest, err)
	}
	if _, _, err := boolParam(p, ParamEnableEmptyFinal); err != nil {
		return fmt.Errorf("%w: parameters: %s", ErrBadRequest, err)
	}
	us, found, err := intParam(p, "timeout")
	if err != nil {
		return fmt.Errorf("%w: parameters: %s", ErrBadRequest, err)
	}
	if found {
		if r.Timeout, err = timeoutParam(us); err != nil {
			return err
		}
	}
	if r.Priority, _, err = intParam(p, "priority"); err != nil {
		return fmt.Errorf("%w: parameters: %s", ErrBadRequest, err)
	}
	if r.Priority < 0 {
		return fmt.Errorf("%w: parameters: %s", ErrBadRequest, errNegativePriority)
	}
	return r.readSequence(p)
}

// decodeInput checks one input and takes its data from JSON, from the
// front of bin (returning what is left of bin) or from shared memory,
// counting the bytes it decodes or copies in r.
func decodeInput(in RequestInput, bin []byte, shm SharedMemory, r *Request) (tensor.Tensor, []byte, error) {
	dt, n, err := checkInput(in.Name, in.DataType, in.Shape)
	if err != nil {
		return tensor.Tensor{}, bin, err
	}
	if in.Shape == nil {
		return tensor.Tensor{}, bin, errors.New("no shape")
	}
	size, found, err := intParam(in.Parameters, "binary_data_size")
	if err != nil {
		return tensor.Tensor{}, bin, err
	}
	ref, inShm, err := jsonShmRef(in.Parameters)
	if err != nil {
		return tensor.Tensor{}, bin, err
	}
	var data []byte
	switch {
	case inShm && (found || len(in.Data) > 0):
		return tensor.Tensor{}, bin, fmt.Errorf("has %s and also data or binary_data_size", ParamShmRegion)
	case inShm:
		if data, err = readShm(shm, ref, fixedBytes(dt, n), &r.ShmBytes); err != nil {
			return tensor.Tensor{}, bin, err
		}
	case found && len(in.Data) > 0:
		return tensor.Tensor{}, bin, errors.New("has both data and binary_data_size")
	case found:
		// BYTES elements vary in length: tensor.New counts them below.
		if want := fixedBytes(dt, n); want >= 0 && size != want {
			return tensor.Tensor{}, bin, fmt.Errorf("binary_data_size is %d but shape %v of %s needs %d bytes", size, in.Shape, dt, want)
		}
		if size < 0 || size > int64(len(bin)) {
			return tensor.Tensor{}, bin, fmt.Errorf("binary_data_size is %d but only %d bytes of binary data remain", size, len(bin))
		}
		data, bin = bin[:size], bin[size:]
	case len(in.Data) > 0:
		if data, err = decodeData(in.Data, dt, n); err != nil {
			return tensor.Tensor{}, bin, err
		}
		r.DecodedBytes += int64(len(data))
	default:
		return tensor.Tensor{}, bin, errors.New("has neither data nor binary_data_size")
	}
	t, err := tensor.New(in.Name, dt, in.Shape, data)
	return t, bin, err
}

// fixedBytes is the byte count n elements of dt take, or -1 for BYTES
// (whose elements vary in length).
func fixedBytes(dt tensor.DataType, n int64) int64 {
	if dt.Size() == 0 {
		return -1
	}
	return n * int64(dt.Size())
}

// outputShm checks an output asked for in shared memory (the result of
// jsonShmRef or grpcShmRef): nil when it is not.
func outputShm(shm SharedMemory, ref ShmRef, found bool, err error) (*ShmRef, error) {
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, nil
	case shm == nil:
		return nil, errNoShm
	}
	return &ref, nil
}

// checkInput checks what every input declares, whichever protocol carries
// it: a name, a KServe v2 data type, and a shape within
// MaxRank and tensor.MaxElements. It returns the type and the element count.
func checkInput(name, datatype string, shape []int64) (tensor.DataType, int64, error) {
	if name == "" {
		return "", 0, errors.New("no name")
	}
	dt, err := tensor.ParseDataType(datatype)
	if err != nil {
		if d, ok := tensor.SuggestDataType(datatype); ok {
			return "", 0, fmt.Errorf("datatype %q is not a KServe v2 data type; send %s", datatype, d)
		}
		return "", 0, fmt.Errorf("datatype %q is not a KServe v2 data type (FP32, INT64, BOOL, ...)", datatype)
	}
	if len(shape) > MaxRank {
		return "", 0, fmt.Errorf("shape has %d dimensions, at most %d are allowed", len(shape), MaxRank)
	}
	n, err := tensor.NumElements(shape)
	if err != nil {
		return "", 0, fmt.Errorf("shape %v: %w", shape, err)
	}
	return dt, n, nil
}

// timeoutParam checks the "timeout" parameter's microseconds.
func timeoutParam(us int64) (time.Duration, error) {
	if us <= 0 || us > math.MaxInt64/int64(time.Microsecond) {
		return 0, fmt.Errorf("%w: parameters: timeout must be a positive number of microseconds", ErrBadRequest)
	}
	return time.Duration(us) * time.Microsecond, nil
}

func boolParam(p Parameters, key string) (v, found bool, err error) {
	raw, ok := p[key]
	if !ok {
		return false, false, nil
	}
	return parseBool(raw, key)
}

// parseBool reads a boolean parameter that is present; apart from
// boolParam for the reason parseInt is apart from intParam.
func parseBool(raw []byte, key string) (bool, bool, error) {
	var v bool
	if err := json.Unmarshal(raw, &v); err != nil {
		return false, true, fmt.Errorf("%s must be true or false", key)
	}
	return v, true, nil
}

func intParam(p Parameters, key string) (v int64, found bool, err error) {
	raw, ok := p[key]
	if !ok {
		return 0, false, nil
	}
	return parseInt(raw, key)
}

// parseInt reads an integer parameter that is present. Apart from intParam
// so that the value Unmarshal fills escapes only when there is one: most
// requests give few of the parameters looked for.
func parseInt(raw []byte, key string) (int64, bool, error) {
	var v int64
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, true, fmt.Errorf("%s must be an integer", key)
	}
	return v, true, nil
}

// jsonErr shortens the JSON decoder's messages.
func jsonErr(err error) string {
	return strings.TrimPrefix(strings.TrimPrefix(err.Error(), "json: "), "jsontext: ")
}
