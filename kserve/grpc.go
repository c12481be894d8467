package kserve

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/gpulet/gpuletd/executor/tensor"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// DecodeGRPCRequest checks a gRPC inference request as DecodeRequest checks
// a REST body and returns the same Request. Inputs in raw_input_contents are
// used in place; typed contents are packed into little-endian bytes. Errors
// wrap ErrBadRequest and name the input. A tensor placed in shared memory is
// refused: DecodeGRPCRequestWith reads those.
func DecodeGRPCRequest(m *pb.ModelInferRequest) (*Request, error) {
	return DecodeGRPCRequestWith(m, nil)
}

// DecodeGRPCRequestWith is DecodeGRPCRequest where inputs may be placed in
// the system shared-memory regions of shm (copied out here) and outputs
// asked for in them. raw_input_contents then holds the inputs that are not
// in shared memory, in their order.
func DecodeGRPCRequestWith(m *pb.ModelInferRequest, shm SharedMemory) (*Request, error) {
	bad := func(format string, args ...any) (*Request, error) {
		return nil, fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, args...))
	}
	if len(m.Inputs) == 0 {
		return bad("request has no inputs")
	}
	refs := make([]*ShmRef, len(m.Inputs))
	inMessage := 0
	for i, in := range m.Inputs {
		ref, found, err := grpcShmRef(in.Parameters)
		if err != nil {
			return nil, inputError(i, in.Name, err)
		}
		if found {
			refs[i] = &ref
		} else {
			inMessage++
		}
	}
	raw := m.RawInputContents
	if len(raw) > 0 && len(raw) != inMessage {
		return bad("raw_input_contents has %d entries for %d inputs not in shared memory: give every such input's data there, or none", len(raw), inMessage)
	}
	r := &Request{ID: m.Id}
	if err := r.readGRPCParameters(m.Parameters); err != nil {
		return nil, err
	}
	next := 0
	for i, in := range m.Inputs {
		var (
			t   tensor.Tensor
			err error
		)
		switch {
		case refs[i] != nil:
			t, err = decodeGRPCShmInput(in, *refs[i], shm, &r.ShmBytes)
		default:
			var data []byte
			if len(raw) > 0 {
				data = raw[next]
				next++
			}
			t, err = decodeGRPCInput(in, data, len(raw) > 0, &r.DecodedBytes)
		}
		if err := r.addInput(i, in.Name, t, err); err != nil {
			return nil, err
		}
	}
	for _, o := range m.Outputs {
		if err := r.checkOutputName(o.Name); err != nil {
			return nil, err
		}
		// Over gRPC every output travels in raw_output_contents, or in
		// shared memory.
		out := OutputRequest{Name: o.Name, Binary: true}
		ref, found, err := grpcShmRef(o.Parameters)
		if out.Shm, err = outputShm(shm, ref, found, err); err != nil {
			return bad("output %q: %s", o.Name, err)
		}
		if v, ok := o.Parameters[ParamClassification]; ok {
			classes, err := grpcInt(v)
			if err != nil {
				return bad("output %q: %s must be an integer", o.Name, ParamClassification)
			}
			if err := out.classify(classes); err != nil {
				return bad("output %q: %s", o.Name, err)
			}
		}
		r.Outputs = append(r.Outputs, out)
	}
	r.BinaryOutputs = true
	return r, nil
}

// decodeGRPCShmInput checks one input placed in shared memory and copies
// its bytes out, counting them in copied.
func decodeGRPCShmInput(in *pb.ModelInferRequest_InferInputTensor, ref ShmRef, shm SharedMemory, copied *int64) (tensor.Tensor, error) {
	dt, n, err := checkInput(in.Name, in.Datatype, in.Shape)
	if err != nil {
		return tensor.Tensor{}, err
	}
	if in.Contents != nil {
		return tensor.Tensor{}, fmt.Errorf("has %s and also contents", ParamShmRegion)
	}
	data, err := readShm(shm, ref, fixedBytes(dt, n), copied)
	if err != nil {
		return tensor.Tensor{}, err
	}
	return tensor.New(in.Name, dt, in.Shape, data)
}

// readGRPCParameters reads "timeout" (µs), "priority" and a sequence's
// parameters, and refuses Triton's own but ParamEnableEmptyFinal (a bool);
// other parameters are ignored, as in REST.
func (r *Request) readGRPCParameters(p map[string]*pb.InferParameter) error {
	if err := checkReservedKeys(p); err != nil {
		return err
	}
	if v, ok := p[ParamEnableEmptyFinal]; ok {
		if _, isBool := v.GetParameterChoice().(*pb.InferParameter_BoolParam); !isBool {
			return fmt.Errorf("%w: parameters: %s must be a bool_param", ErrBadRequest, ParamEnableEmptyFinal)
		}
	}
	if v, ok := p["timeout"]; ok {
		us, err := grpcInt(v)
		if err != nil {
			us = 0 // not an integer: refused as out of range
		}
		if r.Timeout, err = timeoutParam(us); err != nil {
			return err
		}
	}
	if v, ok := p["priority"]; ok {
		pr, err := grpcInt(v)
		if err != nil {
			return fmt.Errorf("%w: parameters: priority must be an integer", ErrBadRequest)
		}
		if pr < 0 {
			return fmt.Errorf("%w: parameters: %s", ErrBadRequest, errNegativePriority)
		}
		r.Priority = pr
	}
	return r.readGRPCSequence(p)
}

// grpcInt reads an integer parameter given as int64_param or uint64_param.
func grpcInt(v *pb.InferParameter) (int64, error) {
	switch x := v.GetParameterChoice().(type) {
	case *pb.InferParameter_Int64Param:
		return x.Int64Param, nil
	case *pb.InferParameter_Uint64Param:
		if x.Uint64Param > math.MaxInt64 {
			return 0, errors.New("out of range")
		}
		return int64(x.Uint64Param), nil
	}
	return 0, errors.New("not an integer")
}

// decodeGRPCInput checks one input; raw says the request carries its data in
// raw_input_contents (data), otherwise it is in the typed contents, whose
// bytes once packed it adds to decoded. An empty shape is a scalar (the
// protocol cannot tell it from none).
func decodeGRPCInput(in *pb.ModelInferRequest_InferInputTensor, data []byte, raw bool, decoded *int64) (tensor.Tensor, error) {
	dt, n, err := checkInput(in.Name, in.Datatype, in.Shape)
	if err != nil {
		return tensor.Tensor{}, err
	}
	switch {
	case raw && in.Contents != nil:
		return tensor.Tensor{}, errors.New("has contents although the request uses raw_input_contents")
	case raw:
		// BYTES elements vary in length: tensor.New counts them below.
		if want := fixedBytes(dt, n); want >= 0 && int64(len(data)) != want {
			return tensor.Tensor{}, fmt.Errorf("raw_input_contents holds %d bytes but shape %v of %s needs %d", len(data), in.Shape, dt, want)
		}
	case in.Contents == nil:
		return tensor.Tensor{}, errors.New("has no contents and the request no raw_input_contents")
	default:
		if data, err = packContents(in.Contents, dt, n); err != nil {
			return tensor.Tensor{}, err
		}
		*decoded += int64(len(data))
	}
	return tensor.New(in.Name, dt, in.Shape, data)
}

// packContents packs the typed contents a data type travels in into
// little-endian bytes, checking the count and every value's range. The count
// is checked before anything is allocated: the shape alone may declare up to
// tensor.MaxElements values, which a few bytes of message would otherwise
// make it reserve.
func packContents(c *pb.InferTensorContents, dt tensor.DataType, n int64) ([]byte, error) {
	got, field := contentsLen(c, dt)
	if field == "" {
		return nil, fmt.Errorf("%s has no typed contents in the protocol: send it in raw_input_contents", dt)
	}
	if int64(got) != n {
		return nil, fmt.Errorf("%s holds %d values but the shape needs %d", field, got, n)
	}
	size := dt.Size()
	out := make([]byte, 0, n*int64(size))
	switch dt {
	case tensor.Bool:
		for _, v := range c.BoolContents {
			out = append(out, byte(boolInt(v)))
		}
	case tensor.Int8, tensor.Int16, tensor.Int32:
		lo, hi := int64(-1)<<(8*size-1), int64(1)<<(8*size-1)-1
		for _, v := range c.IntContents {
			if int64(v) < lo || int64(v) > hi {
				return nil, fmt.Errorf("int_contents value %d is out of range for %s", v, dt)
			}
			out = appendUint(out, uint64(v), size)
		}
	case tensor.Int64:
		for _, v := range c.Int64Contents {
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		}
	case tensor.Uint8, tensor.Uint16, tensor.Uint32:
		hi := uint64(1)<<(8*size) - 1
		for _, v := range c.UintContents {
			if uint64(v) > hi {
				return nil, fmt.Errorf("uint_contents value %d is out of range for %s", v, dt)
			}
			out = appendUint(out, uint64(v), size)
		}
	case tensor.Uint64:
		for _, v := range c.Uint64Contents {
			out = binary.LittleEndian.AppendUint64(out, v)
		}
	case tensor.FP32:
		for _, v := range c.Fp32Contents {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		}
	case tensor.FP64:
		for _, v := range c.Fp64Contents {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
		}
	case tensor.Bytes:
		for _, v := range c.BytesContents {
			out = tensor.AppendBytesElement(out, v)
		}
	}
	return out, nil
}

// contentsLen is how many values the typed contents field that dt travels in
// holds, and that field's name; "" for a data type the protocol gives no
// typed field (FP16, BF16).
func contentsLen(c *pb.InferTensorContents, dt tensor.DataType) (int, string) {
	switch dt {
	case tensor.Bool:
		return len(c.BoolContents), "bool_contents"
	case tensor.Int8, tensor.Int16, tensor.Int32:
		return len(c.IntContents), "int_contents"
	case tensor.Int64:
		return len(c.Int64Contents), "int64_contents"
	case tensor.Uint8, tensor.Uint16, tensor.Uint32:
		return len(c.UintContents), "uint_contents"
	case tensor.Uint64:
		return len(c.Uint64Contents), "uint64_contents"
	case tensor.FP32:
		return len(c.Fp32Contents), "fp32_contents"
	case tensor.FP64:
		return len(c.Fp64Contents), "fp64_contents"
	case tensor.Bytes:
		return len(c.BytesContents), "bytes_contents"
	}
	return 0, ""
}

// EncodeGRPCResponse builds the gRPC answer: every output's data goes in
// raw_output_contents as it is (not copied), as Triton answers, except an
// output placed in shared memory (already written there), which carries its
// region in its parameters and no entry in raw_output_contents.
func EncodeGRPCResponse(head InferResponseJSON, outs []Output) *pb.ModelInferResponse {
	res := &pb.ModelInferResponse{ModelName: head.ModelName, ModelVersion: head.ModelVersion, Id: head.ID,
		Outputs: make([]*pb.ModelInferResponse_InferOutputTensor, len(outs)), RawOutputContents: make([][]byte, 0, len(outs))}
	for k, v := range head.Parameters {
		if b, ok := v.(bool); ok {
			if res.Parameters == nil {
				res.Parameters = map[string]*pb.InferParameter{}
			}
			res.Parameters[k] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: b}}
		}
	}
	for i, o := range outs {
		t := o.Tensor
		res.Outputs[i] = &pb.ModelInferResponse_InferOutputTensor{Name: t.Name, Datatype: string(t.DataType), Shape: t.Shape}
		if o.Shm == nil {
			res.RawOutputContents = append(res.RawOutputContents, t.Data)
			continue
		}
		p := map[string]*pb.InferParameter{
			ParamShmRegion: {ParameterChoice: &pb.InferParameter_StringParam{StringParam: o.Shm.Region}},
			ParamShmSize:   {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: int64(len(t.Data))}},
		}
		if o.Shm.Offset != 0 {
			p[ParamShmOffset] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: o.Shm.Offset}}
		}
		res.Outputs[i].Parameters = p
	}
	return res
}
