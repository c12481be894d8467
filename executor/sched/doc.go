// Package sched is the scheduling core of one gpu-let and the routing policy
// that spreads a model's requests over several gpu-lets.
//
// A [Scheduler] is a pure state machine for ONE gpu-let serving several models:
// per model a deadline-ordered queue, and one batch running at a time. It does
// no I/O, starts no goroutine and never reads a clock: every method takes the
// current time (a [time.Duration] since an epoch chosen by the caller) so the
// executor process drives it with a [RealClock] and the node simulator with a
// [VirtualClock], and both run exactly the same code. Decisions come out
// synchronously through a [Sink] (dispatch a batch, reject a request, preempt
// the running batch); the caller's single timer is [Scheduler.NextWakeup].
//
// Policies ([Policy], chosen by name with [ParsePolicy]):
//
//   - deferred (default): Symphony's deferred batch scheduling (Symphony §3.1,
//     Algorithm 1): a model's batch becomes dispatchable at its frontrun moment
//     d − ℓ(|B|+1), the instant after which it cannot grow any more, and among
//     dispatchable batches the one with the smallest latest moment d − ℓ(|B|)
//     goes first. Two additions, each of which can be turned off ([Deferred]):
//     while two or more models have requests queued the gpu-let does not idle
//     waiting for a frontrun (guard.go), and under overload a batch may be
//     gathered behind the head of the queue, the passed-over requests dropped,
//     so that goodput stays flat beyond the capacity (window.go);
//   - eager: dispatch as soon as the gpu-let is free, the model whose head has
//     the earliest deadline first;
//   - timeout:k: like deferred, but a batch also becomes dispatchable k after
//     its earliest arrival (Symphony §3.4 describes this variant);
//   - flex: SHEPHERD's FLEX (SHEPHERD §5.2, Algorithm 1): the largest feasible
//     batch across all models first, with optional preemption of a running
//     batch λ times smaller (λ ≈ 3.03, SHEPHERD Theorem 5.2).
//
// Under every policy a batch is dispatched only if it finishes by the earliest
// deadline in it, and a request that cannot finish even alone is rejected at
// the first instant that becomes true (or earlier, as Dropped, when head
// dropping passes it over); no request is executed late or left waiting.
//
// [Route] is the routing policy: given the state each gpu-let publishes
// ([Scheduler.RouteState]) it picks the gpu-let for a request so that batches
// stay as large as one shared queue would make them (Symphony §3.3, staggered
// execution).
//
// [Sim] is a small discrete-event driver in virtual time (arrivals, timers,
// batch completions after ℓ(|B|)) on which the node simulator builds, and
// [BenchCore] measures the core's speed in requests per second per core.
package sched
