package daemon

import (
	"context"
	"strconv"
	"sync"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// streamOrder keeps a stream's requests of one sequence in the order they
// were sent: the stream runs its requests side by side, so a request of a
// sequence waits until the one sent before it in the same sequence holds
// its turn (or failed before it), and then asks for its own. Only the
// stream's receive loop calls next.
type streamOrder struct {
	last map[string]chan struct{} // by model, version and sequence_id: closed once that request took its turn
}

// maxStreamSequences is how many sequences' last requests a stream tracks
// before it forgets those that took their turn.
const maxStreamSequences = 1024

// next places r after the request of its sequence sent before it on the
// stream: it returns what to wait for first (nil: nothing) and what to call
// once r holds its turn or will not. A request that names no sequence waits
// for nothing, and has nothing to call (nil).
func (o *streamOrder) next(r *pb.ModelInferRequest) (after <-chan struct{}, taken func()) {
	id, ok := r.Parameters["sequence_id"]
	if !ok {
		return nil, nil
	}
	key := r.ModelName + "\x00" + r.ModelVersion + "\x00" + sequenceIDText(id)
	if o.last == nil {
		o.last = map[string]chan struct{}{}
	}
	if len(o.last) >= maxStreamSequences {
		for k, ch := range o.last {
			select {
			case <-ch:
				delete(o.last, k)
			default:
			}
		}
	}
	mine := make(chan struct{})
	after, o.last[key] = o.last[key], mine
	return after, sync.OnceFunc(func() { close(mine) })
}

// sequenceIDText is a sequence_id parameter as a key: its kind and value.
func sequenceIDText(p *pb.InferParameter) string {
	switch x := p.GetParameterChoice().(type) {
	case *pb.InferParameter_StringParam:
		return "s" + x.StringParam
	case *pb.InferParameter_Uint64Param:
		return "n" + strconv.FormatUint(x.Uint64Param, 10)
	case *pb.InferParameter_Int64Param:
		return "n" + strconv.FormatInt(x.Int64Param, 10)
	}
	return "?"
}

// turnTakenKey holds, in a request's context, what to call once the
// request holds its sequence's turn or will not (streamOrder).
type turnTakenKey struct{}

// withTurnTaken is ctx carrying taken.
func withTurnTaken(ctx context.Context, taken func()) context.Context {
	return context.WithValue(ctx, turnTakenKey{}, taken)
}

// turnTaken tells the request's stream, if any, that the request holds its
// sequence's turn or will not.
func turnTaken(ctx context.Context) {
	if f, ok := ctx.Value(turnTakenKey{}).(func()); ok {
		f()
	}
}
