package repository

import (
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// QueuePolicy is what a config.pbtxt's ModelQueuePolicy asks of a model's
// requests, of every priority level (dynamic_batching.default_queue_policy)
// or of one (priority_queue_policy): how long one may take before it is
// refused, and, for a level, how many may be held at once. The zero value
// asks nothing: a request is bound by its model's SLO and its own timeout
// parameter alone.
type QueuePolicy struct {
	// Timeout, above 0, is a request's timeout when it sets none
	// (default_timeout_microseconds): a request not answered by then is
	// refused, as one whose own timeout ran out is.
	Timeout time.Duration
	// AllowOverride lets a request's own timeout parameter shorten Timeout
	// (allow_timeout_override); without it, Timeout stands.
	AllowOverride bool
	// Delay is timeout_action DELAY: a request past its timeout is not
	// refused; its model's SLO alone binds it.
	Delay bool
	// MaxQueue, above 0, bounds how many requests of the level the model
	// holds at once on the node, waiting or running (a level's
	// max_queue_size; the default policy's is ModelConfig.MaxQueue, a bound
	// in each gpu-let's executor).
	MaxQueue int
}

// maxQueueTimeout bounds default_timeout_microseconds: a day, far past any
// SLO, so that microseconds turn into a time.Duration without overflow.
const maxQueueTimeout = 24 * time.Hour

// RequestTimeout is the timeout a request that asked for asked (0: none)
// runs under: its own where the policy sets no timeout or lets it shorten
// the policy's, else the policy's; 0 when none binds it, as under DELAY,
// where a timeout refuses nothing.
func (p QueuePolicy) RequestTimeout(asked time.Duration) time.Duration {
	switch {
	case p.Delay:
		return 0
	case p.Timeout == 0, p.AllowOverride && asked > 0 && asked < p.Timeout:
		return asked
	}
	return p.Timeout
}

// QueuePolicyFor is the policy a request of priority level (0: the model
// has no levels) runs under: its level's, else the model's default. A
// model of one level has every request at it.
func (c ModelConfig) QueuePolicyFor(level int) QueuePolicy {
	if p, ok := c.LevelQueues[c.policyLevel(level)]; ok {
		return p
	}
	return c.Queue
}

// QueuePolicyWhere names, for messages, the configuration field whose
// timeout a request of priority level runs under (QueuePolicyFor's).
func (c ModelConfig) QueuePolicyWhere(level int) string {
	l := c.policyLevel(level)
	if _, ok := c.LevelQueues[l]; ok {
		return "dynamic_batching.priority_queue_policy[" + strconv.Itoa(l) + "]"
	}
	return "dynamic_batching.default_queue_policy"
}

// policyLevel is the level whose policy a request of level runs under: a
// model of one level has every request at it.
func (c ModelConfig) policyLevel(level int) int {
	if level == 0 && c.PriorityLevels == 1 {
		return 1
	}
	return level
}

// tritonQueuePolicy reads a ModelQueuePolicy (where says which), checking
// its timeout and bound; the bound is read into MaxQueue.
func tritonQueuePolicy(where string, qp *tritonpb.ModelQueuePolicy, bad, note func(string, ...any)) QueuePolicy {
	var p QueuePolicy
	if us := qp.GetDefaultTimeoutMicroseconds(); us > uint64(maxQueueTimeout/time.Microsecond) {
		bad("%s.default_timeout_microseconds: %d is not allowed; use 0 (none) to %d", where, us, maxQueueTimeout/time.Microsecond)
	} else {
		p.Timeout = time.Duration(us) * time.Microsecond
	}
	if q := qp.GetMaxQueueSize(); q > maxQueue {
		bad("%s.max_queue_size: %d is not allowed; use 0 (no bound of its own) to %d", where, q, maxQueue)
	} else {
		p.MaxQueue = int(q)
	}
	p.AllowOverride = qp.GetAllowTimeoutOverride()
	p.Delay = qp.GetTimeoutAction() == tritonpb.ModelQueuePolicy_DELAY
	if p.Delay && (p.Timeout > 0 || p.AllowOverride) {
		note("%s.timeout_action DELAY: a request past its timeout is not refused and is served within its SLO as the others are (Triton runs it after the requests still within theirs)", where)
	}
	return p
}

// tritonQueuePolicies reads dynamic_batching's default queue policy (its
// bound apart: ModelConfig.MaxQueue) and the policies of the priority
// levels, whose keys tritonPriorities has checked.
func tritonQueuePolicies(db *tritonpb.ModelDynamicBatching, bad, note func(string, ...any)) (def QueuePolicy, levels map[int]QueuePolicy) {
	if qp := db.GetDefaultQueuePolicy(); qp != nil {
		def = tritonQueuePolicy("dynamic_batching.default_queue_policy", qp, bad, note)
		def.MaxQueue = 0
	}
	for _, k := range slices.Sorted(maps.Keys(db.GetPriorityQueuePolicy())) {
		if levels == nil {
			levels = map[int]QueuePolicy{}
		}
		levels[int(k)] = tritonQueuePolicy("dynamic_batching.priority_queue_policy["+strconv.FormatUint(k, 10)+"]", db.PriorityQueuePolicy[k], bad, note)
	}
	return def, levels
}

// Triton is p as a config.pbtxt's ModelQueuePolicy, with maxQueue as its
// bound; nil for a policy that asks nothing.
func (p QueuePolicy) Triton(maxQueue int) *tritonpb.ModelQueuePolicy {
	if p == (QueuePolicy{}) && maxQueue == 0 {
		return nil
	}
	qp := &tritonpb.ModelQueuePolicy{DefaultTimeoutMicroseconds: uint64(p.Timeout / time.Microsecond),
		AllowTimeoutOverride: p.AllowOverride, MaxQueueSize: uint32(maxQueue)}
	if p.Delay {
		qp.TimeoutAction = tritonpb.ModelQueuePolicy_DELAY
	}
	return qp
}

// QueuePolicyStatus is one of a model's queue policies as the daemon's
// status and `gpuletd models check` give it.
type QueuePolicyStatus struct {
	// Level is the priority level it is for; 0: every level without a
	// policy of its own (the default queue policy).
	Level int `json:"level"`
	// TimeoutUS is the timeout of a request that sets none, in µs (0:
	// none); AllowTimeoutOverride lets a request's own shorten it.
	TimeoutUS            int64 `json:"timeout_us,omitempty"`
	AllowTimeoutOverride bool  `json:"allow_timeout_override,omitempty"`
	// TimeoutAction is REJECT (a request past its timeout is refused) or
	// DELAY (it is not).
	TimeoutAction string `json:"timeout_action"`
	// MaxQueueSize bounds the level's requests being served at once on
	// the node (0: no bound of its own); the default policy's bound is the
	// model's max_queue.
	MaxQueueSize int `json:"max_queue_size,omitempty"`
}

// QueuePolicies are the queue policies of a model configured c that ask
// something, the default's first, then by level.
func QueuePolicies(c ModelConfig) []QueuePolicyStatus {
	var out []QueuePolicyStatus
	add := func(level int, p QueuePolicy) {
		if p == (QueuePolicy{}) {
			return
		}
		action := tritonpb.ModelQueuePolicy_REJECT
		if p.Delay {
			action = tritonpb.ModelQueuePolicy_DELAY
		}
		out = append(out, QueuePolicyStatus{Level: level, TimeoutUS: p.Timeout.Microseconds(), AllowTimeoutOverride: p.AllowOverride,
			TimeoutAction: action.String(), MaxQueueSize: p.MaxQueue})
	}
	add(0, c.Queue)
	for _, level := range slices.Sorted(maps.Keys(c.LevelQueues)) {
		add(level, c.LevelQueues[level])
	}
	return out
}
