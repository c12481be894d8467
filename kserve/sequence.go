package kserve

import (
	"encoding/json"
	"fmt"
	"strconv"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// SequenceRef is a request's place in a sequence of a stateful model: the
// sequence_id, sequence_start and sequence_end parameters. A request that
// names no sequence (no sequence_id, 0 or "") has ID "".
type SequenceRef struct {
	// ID is the correlation ID as given: a number's decimal digits, or the
	// string. Numeric tells the two apart, as the protocol does.
	ID      string
	Numeric bool
	// Number is a numeric ID's value (0 for a string ID).
	Number     uint64
	Start, End bool
}

// Given says the request names a sequence.
func (s SequenceRef) Given() bool { return s.ID != "" }

// String names the sequence for messages: 42 or "call-7".
func (s SequenceRef) String() string {
	if s.Numeric {
		return s.ID
	}
	return strconv.Quote(s.ID)
}

// readSequence reads the sequence parameters of a REST request.
func (r *Request) readSequence(p Parameters) error {
	if raw, ok := p["sequence_id"]; ok {
		var s string
		var n uint64
		switch {
		case json.Unmarshal(raw, &n) == nil:
			if n != 0 {
				r.Sequence.ID, r.Sequence.Numeric, r.Sequence.Number = strconv.FormatUint(n, 10), true, n
			}
		case json.Unmarshal(raw, &s) == nil:
			r.Sequence.ID = s
		default:
			return fmt.Errorf("%w: parameters: sequence_id must be an unsigned integer or a string", ErrBadRequest)
		}
	}
	var err error
	if r.Sequence.Start, _, err = boolParam(p, "sequence_start"); err != nil {
		return fmt.Errorf("%w: parameters: %s", ErrBadRequest, err)
	}
	if r.Sequence.End, _, err = boolParam(p, "sequence_end"); err != nil {
		return fmt.Errorf("%w: parameters: %s", ErrBadRequest, err)
	}
	return nil
}

// readGRPCSequence reads the sequence parameters of a gRPC request.
func (r *Request) readGRPCSequence(p map[string]*pb.InferParameter) error {
	if v, ok := p["sequence_id"]; ok {
		switch x := v.GetParameterChoice().(type) {
		case *pb.InferParameter_StringParam:
			r.Sequence.ID = x.StringParam
		case *pb.InferParameter_Uint64Param:
			if x.Uint64Param != 0 {
				r.Sequence.ID, r.Sequence.Numeric, r.Sequence.Number = strconv.FormatUint(x.Uint64Param, 10), true, x.Uint64Param
			}
		case *pb.InferParameter_Int64Param:
			if x.Int64Param < 0 {
				return fmt.Errorf("%w: parameters: sequence_id %d is negative", ErrBadRequest, x.Int64Param)
			}
			if x.Int64Param != 0 {
				r.Sequence.ID, r.Sequence.Numeric, r.Sequence.Number = strconv.FormatInt(x.Int64Param, 10), true, uint64(x.Int64Param)
			}
		default:
			return fmt.Errorf("%w: parameters: sequence_id must be an unsigned integer or a string", ErrBadRequest)
		}
	}
	if err := grpcBool(p, "sequence_start", &r.Sequence.Start); err != nil {
		return err
	}
	return grpcBool(p, "sequence_end", &r.Sequence.End)
}

// grpcBool reads a bool parameter into to when the request gives it.
func grpcBool(p map[string]*pb.InferParameter, key string, to *bool) error {
	v, ok := p[key]
	if !ok {
		return nil
	}
	b, isBool := v.GetParameterChoice().(*pb.InferParameter_BoolParam)
	if !isBool {
		return fmt.Errorf("%w: parameters: %s must be true or false", ErrBadRequest, key)
	}
	*to = b.BoolParam
	return nil
}
