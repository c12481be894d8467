package sched

import (
	"math"
	"time"
)

// ModelID identifies a model inside one Scheduler: a small index chosen by the
// caller (the executor numbers the models placed on its gpu-let).
type ModelID uint32

// MaxModels bounds model ids so that per-model tables stay small slices.
const MaxModels = 1 << 16

// never is the time of an event that will not happen.
const never = time.Duration(math.MaxInt64)

// always is the readiness time of a batch that may go at once.
const always = time.Duration(math.MinInt64)

// Request is one inference request as the scheduler sees it: 32 bytes, no
// pointers, copied by value into the queues.
type Request struct {
	// ID is the caller's request id.
	ID uint64
	// Model is the model the request is for.
	Model ModelID
	// Slot is an opaque caller handle (for example the index of the response
	// channel in the executor's table); the scheduler never reads it.
	Slot uint32
	// Arrival is when the request arrived.
	Arrival time.Duration
	// Deadline is when its response is due: arrival + SLO, or earlier when
	// the client asked for a tighter one. A batch containing the request must
	// finish at or before it.
	Deadline time.Duration
}

// Batch is one dispatched batch of a single model.
type Batch struct {
	// Seq numbers the batches dispatched by one Scheduler, from 1; BatchDone
	// names the batch it completes by it.
	Seq uint64
	// Model is the model of every request in the batch.
	Model ModelID
	// Requests are in deadline order. The slice belongs to the Scheduler and
	// stays valid until the batch is completed (BatchDone) or preempted;
	// callers copy what they need to keep longer.
	Requests []Request
	// Start is when the batch was dispatched.
	Start time.Duration
	// End is when it is expected to finish: Start + ℓ(len(Requests)).
	End time.Duration
}

// Reason says why a request was rejected.
type Reason uint8

// The reasons a request is rejected.
const (
	// DeadlineUnreachable: the request could not finish by its deadline even
	// alone (now + ℓ(1) > deadline).
	DeadlineUnreachable Reason = iota + 1
	// QueueFull: the model's queue was at its maximal length.
	QueueFull
	// Preempted: the request's batch was preempted and it could no longer
	// finish in time when it came back to the queue.
	Preempted
	// ModelRemoved: the model was removed while the request waited.
	ModelRemoved
	// Unroutable: no gpu-let serving the model could take the request
	// (reported by drivers that route, never by a Scheduler).
	Unroutable
	// Dropped: the request was at the head of its queue and passed over so
	// that a larger batch behind it could meet its deadline; it could not
	// have finished after that batch (head dropping under overload, deferred
	// policy). An SLO miss, answered at once instead of at expiry.
	Dropped
	// OverShare: the model asked more than its share of an overloaded node
	// and the excess is refused before routing (reported by drivers that
	// admit, never by a Scheduler).
	OverShare

	numReasons
)

// String returns the reason's name as used in metrics labels.
func (r Reason) String() string {
	switch r {
	case DeadlineUnreachable:
		return "deadline_unreachable"
	case QueueFull:
		return "queue_full"
	case Preempted:
		return "preempted"
	case ModelRemoved:
		return "model_removed"
	case Unroutable:
		return "unroutable"
	case Dropped:
		return "dropped"
	case OverShare:
		return "over_share"
	}
	return "unknown"
}

// Sink receives a Scheduler's decisions, synchronously, in the order they are
// taken. A Sink must not call back into the Scheduler that calls it.
type Sink interface {
	// Dispatch starts a batch on the gpu-let; the driver reports its end with
	// BatchDone(now, b.Seq).
	Dispatch(now time.Duration, b Batch)
	// Reject answers a request that will not be executed.
	Reject(now time.Duration, r Request, why Reason)
	// Preempt cancels the running batch b. Its requests have not been
	// answered: the Scheduler puts them back in their queue or rejects them
	// (Preempted) right after this call. The driver must not report the
	// batch's completion.
	Preempt(now time.Duration, b Batch)
}
