package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// An answer written by the codec reads back as the protobuf codec's does,
// and a large one's raw outputs are the outputs' own bytes, not a copy.
func TestTheGRPCCodecSendsLargeOutputsAsTheyAre(t *testing.T) {
	answer := func(sizes ...int) *pb.ModelInferResponse {
		m := &pb.ModelInferResponse{ModelName: "tokens", ModelVersion: "1", Id: "a",
			Parameters: map[string]*pb.InferParameter{"emulated": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}}
		for i, n := range sizes {
			b := make([]byte, n)
			for k := range b {
				b[k] = byte(i + k)
			}
			m.Outputs = append(m.Outputs, &pb.ModelInferResponse_InferOutputTensor{Name: "y", Datatype: "UINT8", Shape: []int64{int64(n)}})
			m.RawOutputContents = append(m.RawOutputContents, b)
		}
		return m
	}
	for _, tc := range []struct {
		name     string
		msg      proto.Message
		byRef    bool
		readBack proto.Message
	}{
		{"a small answer, one buffer", answer(10, 4), false, &pb.ModelInferResponse{}},
		{"a large answer", answer(zeroCopyAnswer, 0, 3), true, &pb.ModelInferResponse{}},
		{"a large answer on a stream", &pb.ModelStreamInferResponse{InferResponse: answer(1 << 20)}, true, &pb.ModelStreamInferResponse{}},
		{"a stream's failed request", &pb.ModelStreamInferResponse{ErrorMessage: "no", InferResponse: &pb.ModelInferResponse{Id: "b"}}, false, &pb.ModelStreamInferResponse{}},
		{"another message", &pb.ServerLiveResponse{Live: true}, false, &pb.ServerLiveResponse{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newGRPCCodec(nil)
			want, err := proto.Marshal(tc.msg)
			require.NoError(t, err)
			got, err := c.Marshal(tc.msg)
			require.NoError(t, err)
			defer got.Free()
			require.Equal(t, len(want), got.Len(), "the size gRPC checks against its limit")
			require.NoError(t, c.Unmarshal(got, tc.readBack))
			require.True(t, proto.Equal(tc.msg, tc.readBack), "reads back as sent")

			raw := outputsOf(tc.msg)
			shared := 0
			for _, b := range got {
				for _, out := range raw {
					if len(out) > 0 && len(b.ReadOnlyData()) == len(out) && &b.ReadOnlyData()[0] == &out[0] {
						shared++
					}
				}
			}
			if tc.byRef {
				require.Equal(t, nonEmpty(raw), shared, "every output's bytes sent as they are")
			} else {
				require.Zero(t, shared)
				require.Len(t, got, 1, "one buffer")
			}
		})
	}
}

// outputsOf is the raw outputs of an answer, on a stream or not.
func outputsOf(m proto.Message) [][]byte {
	switch m := m.(type) {
	case *pb.ModelInferResponse:
		return m.RawOutputContents
	case *pb.ModelStreamInferResponse:
		return m.GetInferResponse().GetRawOutputContents()
	}
	return nil
}

func nonEmpty(bs [][]byte) int {
	n := 0
	for _, b := range bs {
		if len(b) > 0 {
			n++
		}
	}
	return n
}
