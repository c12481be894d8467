package daemon

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

func streamRequest(model string, id *pb.InferParameter) *pb.ModelInferRequest {
	r := &pb.ModelInferRequest{ModelName: model}
	if id != nil {
		r.Parameters = map[string]*pb.InferParameter{"sequence_id": id}
	}
	return r
}

func TestStreamOrderChainsASequencesRequests(t *testing.T) {
	num := func(v uint64) *pb.InferParameter {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: v}}
	}
	str := func(v string) *pb.InferParameter {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: v}}
	}
	var o streamOrder
	after, taken := o.next(streamRequest("m", nil))
	require.Nil(t, after)
	require.Nil(t, taken, "a request of no sequence waits for nothing")

	after1, taken1 := o.next(streamRequest("m", num(7)))
	require.Nil(t, after1, "the first of its sequence on the stream")
	after2, taken2 := o.next(streamRequest("m", num(7)))
	require.NotNil(t, after2)
	other, takenOther := o.next(streamRequest("m", str("7")))
	require.Nil(t, other, "a string ID is another sequence than the number")
	otherModel, _ := o.next(streamRequest("n", num(7)))
	require.Nil(t, otherModel, "another model's sequence")

	select {
	case <-after2:
		t.Fatal("the second waits for the first")
	default:
	}
	taken1()
	taken1() // once only
	<-after2
	taken2()
	takenOther()

	// The turns taken are forgotten once many sequences were seen.
	for i := range maxStreamSequences {
		_, taken := o.next(streamRequest("m", str(strconv.Itoa(i))))
		taken()
	}
	_, taken = o.next(streamRequest("m", str("last")))
	require.Less(t, len(o.last), 8, "those that took their turn are dropped")
	taken()

	// The context carries the call to the request's sequence path.
	called := 0
	ctx := withTurnTaken(context.Background(), func() { called++ })
	turnTaken(ctx)
	turnTaken(context.Background())
	require.Equal(t, 1, called)
}
