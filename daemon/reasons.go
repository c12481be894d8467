package daemon

import "net/http"

// Reasons a request fails with: the reason label of
// gpuletd_request_failures_total, a public name that dashboards and alerts
// match. docs/OPERATIONS.md lists each with its HTTP and gRPC codes, whether
// to retry, and what to do about it.
const (
	// reasonBadRequest: the request is malformed or does not fit the model.
	reasonBadRequest = "bad_request"
	// reasonTooLarge: a body over limits.max_request_body.
	reasonTooLarge = "too_large"
	// reasonBodyTimeout: a body not received within limits.body_timeout.
	reasonBodyTimeout = "body_timeout"
	// reasonMemoryBudget: the bodies in flight hold
	// limits.max_inflight_bytes.
	reasonMemoryBudget = "memory_budget"
	// reasonOutputNotJSON: an output holds NaN or ±Inf, which JSON cannot
	// carry.
	reasonOutputNotJSON = "output_not_json"
	// reasonUnknownModel: no such model in the repository.
	reasonUnknownModel = "unknown_model"
	// reasonUnservable: the model cannot be served (its reason is in the
	// message, the model's metadata and the events).
	reasonUnservable = "unservable"
	// reasonUnplaced: a model loaded through the repository API that the
	// planner could not place.
	reasonUnplaced = "unplaced"
	// reasonOverShare: at overload, a model's requests beyond its share.
	reasonOverShare = "over_share"
	// reasonShedPriority: at overload, a request of a low priority level
	// refused so that the requests of higher ones keep their room.
	reasonShedPriority = "shed_priority"
	// reasonUnroutable: no gpu-let serves the model now.
	reasonUnroutable = "unroutable"
	// reasonExecutorDown: the model's executor is restarting.
	reasonExecutorDown = "executor_down"
	// reasonExecutorFailed: the executor died with the request in flight.
	reasonExecutorFailed = "executor_failed"
	// reasonCrashesExecutor: the same request crashed or hung the model's
	// executor, or faulted its GPU, in a run of its own (crash_suspects.go).
	reasonCrashesExecutor = "crashes_executor"
	// reasonTwinHung: the same request went unanswered well past its
	// deadline, in a run that may never end; refused until that run ends
	// or its executor gives up on it (crash_suspects.go).
	reasonTwinHung = "twin_hung"
	// reasonDeadline: the request's deadline cannot be met, or passed
	// without an answer.
	reasonDeadline = "deadline"
	// reasonDropped: the executor dropped the request from the head of its
	// queue so that the requests behind it meet their deadlines (it could
	// no longer finish in time with them).
	reasonDropped = "dropped"
	// reasonQueueFull: the executor's queue for the model is full, or the
	// request's priority level holds as many requests as its queue policy
	// allows (levelFull).
	reasonQueueFull = "queue_full"
	// reasonUnavailable: the executor did not take the request: it is
	// draining or stopping (a re-plan moves the model), or the model is not
	// loaded there (yet or any more), or the request was cancelled in it.
	reasonUnavailable = "unavailable"
	// reasonCancelled: the request ended before the executor answered: the
	// client went away, or sending it to the executor failed.
	reasonCancelled = "cancelled"
	// reasonDroppedEarly: a pipeline step was refused, so the pipeline's
	// later steps never ran.
	reasonDroppedEarly = "dropped_early"
	// reasonInternal: a fault of gpuletd's or of the engine.
	reasonInternal = "internal"
)

// failureReasons lists every reason above.
var failureReasons = []string{
	reasonBadRequest, reasonTooLarge, reasonBodyTimeout, reasonMemoryBudget, reasonOutputNotJSON,
	reasonUnknownModel, reasonUnservable, reasonUnplaced, reasonOverShare, reasonShedPriority, reasonUnroutable,
	reasonExecutorDown, reasonExecutorFailed, reasonCrashesExecutor, reasonTwinHung, reasonDeadline, reasonDropped, reasonQueueFull, reasonUnavailable,
	reasonCancelled, reasonDroppedEarly, reasonInternal,
}

// retryable tells whether a client should retry e after retryDelay: a 503
// that the next seconds may cure. A model that cannot be served or placed
// waits for the operator or a new plan instead, and its message says why.
func (e *inferError) retryable() bool {
	return e.code == http.StatusServiceUnavailable && e.reason != reasonUnservable && e.reason != reasonUnplaced
}
