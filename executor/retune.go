package executor

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
)

// Retuning a model in place.
//
// A re-plan often loads a model again on a gpu-let that already serves it,
// only to change what the scheduler does with it: its batch cap, its
// interference factor, its SLO or queue bound. The engine's copy of the
// model stays as it is, so the new entry takes over the old one's runtime
// instead of loading the file again: on a GPU that saves opening (and
// tuning) one session per batch size, seconds for a large model, and a
// second copy of its weights while the two overlap. Both entries then hold
// the runtime, which closes when the last lets go.

// runtimeRefs counts the model entries that hold one runtime.
type runtimeRefs struct{ n atomic.Int32 }

func newRuntimeRefs() *runtimeRefs {
	r := &runtimeRefs{}
	r.n.Store(1)
	return r
}

// acquire takes one more hold, unless the runtime has already been let go.
func (r *runtimeRefs) acquire() bool {
	for {
		n := r.n.Load()
		if n <= 0 {
			return false
		}
		if r.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release lets one hold go and reports whether it was the last.
func (r *runtimeRefs) release() bool { return r.n.Add(-1) == 0 }

// sameEngineLoad reports whether b loads the engine's model exactly as a
// does: they differ at most in what only the scheduler reads.
func sameEngineLoad(a, b *pb.LoadModelRequest) bool {
	strip := func(r *pb.LoadModelRequest) *pb.LoadModelRequest {
		c := proto.Clone(r).(*pb.LoadModelRequest)
		c.BatchCap, c.InterferenceFactor, c.SloUs, c.MaxQueue, c.WarmupBatches = 0, 0, 0, 0, nil
		return c
	}
	return proto.Equal(strip(a), strip(b))
}

// warmer is a runtime that can run zero-filled batches of given sizes
// (engineModel), so a retuned model's new batch sizes are ready before it
// serves them.
type warmer interface {
	Warm(ctx context.Context, batches []int) (time.Duration, error)
}

// retune returns the runtime of prev for a load of req that only retunes
// it, warmed at req's warm-up sizes, and the time that took; nil when req
// needs the model loaded anew (or prev's runtime is already let go).
func retune(ctx context.Context, prev *modelEntry, req *pb.LoadModelRequest) (LoadedModel, time.Duration, error) {
	if prev == nil || prev.req == nil || !sameEngineLoad(prev.req, req) || !prev.refs.acquire() {
		return nil, 0, nil
	}
	w, ok := prev.rt.(warmer)
	if !ok || len(req.WarmupBatches) == 0 {
		return prev.rt, 0, nil
	}
	sizes := make([]int, len(req.WarmupBatches))
	for i, b := range req.WarmupBatches {
		sizes[i] = int(b)
	}
	took, err := w.Warm(ctx, sizes)
	if err != nil {
		if prev.refs.release() { // prev let go meanwhile: the last hold was this
			_ = prev.rt.Close()
		}
		return nil, 0, fmt.Errorf("warm up %s again: %w", req.Name, err)
	}
	return prev.rt, took, nil
}
