package executor

import (
	"context"
	"fmt"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// sink receives the scheduler's decisions on the loop.
type sink struct{ l *loop }

// Dispatch hands a batch to the engine worker.
func (k sink) Dispatch(now time.Duration, b sched.Batch) {
	l := k.l
	if l.fault != nil {
		// The device failed for good: nothing more runs. The batch's
		// requests are answered with the rest (loop.answerHeld), and the
		// process ends.
		return
	}
	m := l.ids[b.Model]
	ctx, cancel := context.WithCancel(context.Background())
	j := &job{seq: b.Seq, model: m, start: now, end: now + (b.End - b.Start), began: time.Now(), ctx: ctx, cancel: cancel, idx: make([]uint32, len(b.Requests)),
		slots: make([]slot, len(b.Requests)), inputs: make([][]tensor.Tensor, len(b.Requests))}
	if l.s.opts.Running != nil {
		j.ids = make([]uint64, len(b.Requests))
	}
	for i, q := range b.Requests {
		sl := l.slots[q.Slot]
		j.idx[i], j.slots[i], j.inputs[i] = q.Slot, sl, sl.inputs
		if j.ids != nil {
			j.ids[i] = sl.req.id
		}
		if sl.req.alone {
			if j.alone == nil {
				j.alone = make([]bool, len(b.Requests))
			}
			j.alone[i] = true
		}
	}
	m.running++
	l.running = j
	l.jobs <- j
}

// Reject answers a request the scheduler will not run.
func (k sink) Reject(now time.Duration, q sched.Request, why sched.Reason) {
	l := k.l
	if why == sched.ModelRemoved && l.handing != nil {
		l.moved = append(l.moved, q) // handOver queues it again
		return
	}
	sl := l.slots[q.Slot]
	l.releaseSlot(q.Slot)
	msg := fmt.Sprintf("%s: %s", sl.req.model.name, why)
	if why == sched.ModelRemoved {
		l.answerNotRun(sl.req, msg) // another gpu-let of the model may take it
		return
	}
	l.answerErr(sl.req, rejectCode(why), msg)
}

// rejectCode is the protocol's code for a request the scheduler refused.
func rejectCode(why sched.Reason) pb.Code {
	switch why {
	case sched.Dropped:
		return pb.Code_DROPPED
	case sched.QueueFull:
		return pb.Code_QUEUE_FULL
	case sched.ModelRemoved:
		return pb.Code_UNAVAILABLE
	}
	return pb.Code_DEADLINE
}

// Preempt cancels the running batch. The scheduler puts its rows back in
// the queue with their slots, which stay allocated (or rejects them, which
// releases them).
func (k sink) Preempt(now time.Duration, b sched.Batch) {
	l := k.l
	if j := l.running; j != nil && j.seq == b.Seq {
		j.preempted = true
		j.cancel()
	}
}
