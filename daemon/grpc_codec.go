package daemon

import (
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// grpcCodec is the gRPC server's codec: protobuf, except that a large
// inference answer's raw_output_contents go out as they are, the outputs'
// own bytes referenced where the protobuf codec copies them into one buffer
// with the rest of the message. Until the client has taken it, such an
// answer holds its outputs once rather than twice, and they stay in the
// budget of what requests hold beside their bodies (grpcAnswers).
type grpcCodec struct {
	proto   encoding.CodecV2
	answers *grpcAnswers // nil: nothing held
}

// zeroCopyAnswer is the least raw output bytes an answer sends without
// copying them; a smaller answer is one buffer, as the protobuf codec
// makes it.
const zeroCopyAnswer = 64 << 10

// Field numbers of the inference protocol's messages that the codec
// writes itself.
const (
	fieldRawOutputContents protowire.Number = 6 // ModelInferResponse.raw_output_contents
	fieldInferResponse     protowire.Number = 2 // ModelStreamInferResponse.infer_response
)

func newGRPCCodec(answers *grpcAnswers) grpcCodec {
	return grpcCodec{proto: encoding.GetCodecV2("proto"), answers: answers}
}

// Name is the protobuf codec's: the codec is used in its place.
func (c grpcCodec) Name() string { return c.proto.Name() }

// Unmarshal is the protobuf codec's.
func (c grpcCodec) Unmarshal(data mem.BufferSlice, v any) error { return c.proto.Unmarshal(data, v) }

// Marshal writes v as the protobuf codec does, a large inference answer's
// raw outputs by reference, and an answer held until sent (grpcAnswers)
// in buffers that say when they are.
func (c grpcCodec) Marshal(v any) (mem.BufferSlice, error) {
	var answer *pb.ModelInferResponse
	switch m := v.(type) {
	case *pb.ModelInferResponse:
		answer = m
	case *pb.ModelStreamInferResponse:
		answer = m.InferResponse
	default:
		return c.proto.Marshal(v)
	}
	raw := rawBytes(answer)
	var h *heldAnswer
	if raw >= heldAnswerMin {
		h = c.answers.take(answer)
	}
	if raw < zeroCopyAnswer && h == nil {
		return c.proto.Marshal(v)
	}
	var out mem.BufferSlice
	var err error
	if stream, ok := v.(*pb.ModelStreamInferResponse); raw < zeroCopyAnswer {
		out, err = c.marshalWhole(v.(proto.Message), h)
	} else if ok {
		out, err = c.marshalStreamed(stream, h)
	} else {
		out, _, err = c.marshalInfer(answer, h)
	}
	c.handed(h, err)
	return out, err
}

// marshalWhole writes m as one buffer of the gRPC library's pool, as the
// protobuf codec does, that tells h when it is sent.
func (c grpcCodec) marshalWhole(m proto.Message, h *heldAnswer) (mem.BufferSlice, error) {
	pool := mem.DefaultBufferPool()
	buf := pool.Get(proto.Size(m))
	if _, err := (proto.MarshalOptions{}).MarshalAppend((*buf)[:0], m); err != nil {
		pool.Put(buf)
		return nil, err
	}
	return mem.BufferSlice{h.pooled(buf, pool)}, nil
}

// handed books that h's answer went to the gRPC library, to be given back
// as its pieces are sent; at once when none says so, or it failed (err).
func (c grpcCodec) handed(h *heldAnswer, err error) {
	if h == nil {
		return
	}
	if err != nil {
		h.left = 0
	}
	c.answers.sent(h, 0)
}

// rawBytes is how many bytes m's raw outputs hold (0 for no answer).
func rawBytes(m *pb.ModelInferResponse) int {
	if m == nil {
		return 0
	}
	n := 0
	for _, b := range m.RawOutputContents {
		n += len(b)
	}
	return n
}

// marshalInfer writes m, the rest of it by the protobuf codec and then each
// raw output as its field's key and length and its bytes as they are (in
// pieces of answerStep that tell h when they are sent, h not nil), and
// says how many bytes that is. Protobuf readers take a message's fields in
// any order.
func (c grpcCodec) marshalInfer(m *pb.ModelInferResponse, h *heldAnswer) (mem.BufferSlice, int, error) {
	raw := m.RawOutputContents
	m.RawOutputContents = nil
	head, err := c.proto.Marshal(m)
	m.RawOutputContents = raw
	if err != nil {
		return nil, 0, err
	}
	out, size := head, head.Len()
	for _, b := range raw {
		key := protowire.AppendTag(nil, fieldRawOutputContents, protowire.BytesType)
		key = protowire.AppendVarint(key, uint64(len(b)))
		out = append(out, mem.SliceBuffer(key))
		size += len(key) + len(b)
		if h == nil {
			if len(b) > 0 {
				out = append(out, mem.SliceBuffer(b))
			}
			continue
		}
		for len(b) > 0 {
			n := min(len(b), answerStep)
			out = append(out, h.buffer(b[:n]))
			b = b[n:]
		}
	}
	return out, size, nil
}

// marshalStreamed writes a stream's message: its error message, if any, by
// the protobuf codec, and its answer as marshalInfer writes it, as the
// field that holds it.
func (c grpcCodec) marshalStreamed(m *pb.ModelStreamInferResponse, h *heldAnswer) (mem.BufferSlice, error) {
	answer := m.InferResponse
	inner, size, err := c.marshalInfer(answer, h)
	if err != nil {
		return nil, err
	}
	m.InferResponse = nil
	head, err := c.proto.Marshal(m)
	m.InferResponse = answer
	if err != nil {
		inner.Free()
		return nil, err
	}
	key := protowire.AppendTag(nil, fieldInferResponse, protowire.BytesType)
	key = protowire.AppendVarint(key, uint64(size))
	out := append(head, mem.SliceBuffer(key))
	return append(out, inner...), nil
}
