package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/daemon/repository"
)

// priorityRecent is how long after a request of a level arrived the levels
// below it keep their reserve: without requests above them, they take the
// whole SLO.
const priorityRecent = time.Second

// errShed is a request of a low priority level that no gpu-let of its
// model can finish early enough to leave the reserve to the levels above
// (sched.RouteBy's Shed).
var errShed = errors.New("shed for requests of higher priority")

// priorityKey carries a request's priority parameter through its context
// to where it is routed, a pipeline's steps included.
type priorityKey struct{}

// withPriority returns ctx carrying the priority parameter p (0: none).
func withPriority(ctx context.Context, p int64) context.Context {
	if p == 0 {
		return ctx
	}
	return context.WithValue(ctx, priorityKey{}, p)
}

// priorityOf is the priority parameter ctx carries, 0 when none.
func priorityOf(ctx context.Context) int64 {
	p, _ := ctx.Value(priorityKey{}).(int64)
	return p
}

// priorityLevel is the level of a request of a model configured c that
// asked for priority p: p when it is one of the model's levels, else the
// default level (as Triton takes it); 0 when the model has no levels.
func priorityLevel(c repository.ModelConfig, p int64) int {
	if c.PriorityLevels < 2 {
		return 0
	}
	if p >= 1 && p <= int64(c.PriorityLevels) {
		return int(p)
	}
	return c.DefaultPriority
}

// priorities remembers, by model, when a request of each priority level
// last arrived, for the daemon's concurrent handlers.
type priorities struct {
	mu   sync.Mutex
	seen map[string][]time.Duration // by model: the last arrival of level i+1; 0: none yet
}

// reserve records that a request of model (with levels levels) at level
// arrived at now (the router's clock) and returns the share of its time to
// its deadline that its routing leaves to higher levels: most
// (scheduler.priority_reserve, the lowest level's share below level 1) for
// each level between it and the highest of those that came within
// priorityRecent, over the levels' span. The highest level coming, level 1
// always, takes its whole time.
func (p *priorities) reserve(model string, levels, level int, now time.Duration, most float64) float64 {
	if levels < 2 || level < 1 || level > levels {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := p.seen[model]
	if len(seen) != levels {
		if p.seen == nil {
			p.seen = map[string][]time.Duration{}
		}
		seen = make([]time.Duration, levels)
		p.seen[model] = seen
	}
	seen[level-1] = max(now, 1)
	for i, t := range seen[:level-1] {
		if t > 0 && now-t <= priorityRecent { // the highest level coming
			return most * float64(level-1-i) / float64(levels-1)
		}
	}
	return 0
}

// admitBy is the instant a request due at deadline, arriving at now, is
// routed by when its level leaves share of its time to higher ones.
func admitBy(now, deadline time.Duration, share float64) time.Duration {
	if share <= 0 || deadline <= now {
		return deadline
	}
	return deadline - time.Duration(share*float64(deadline-now))
}

// shedAnswer is the answer to a request shed for higher levels.
func shedAnswer(what string, level, levels int) *inferError {
	return &inferError{code: http.StatusServiceUnavailable, reason: reasonShedPriority, msg: fmt.Sprintf(
		"%s: shed at priority level %d of %d: the model's gpu-lets are too full to finish it early enough to leave room for requests of higher priority, which are coming; retry later, or with a higher priority",
		what, level, levels)}
}
