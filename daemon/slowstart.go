package daemon

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/profiler/store"
)

// A model placed on a gpu-let where a batch of one is predicted past its
// SLO has every request refused there as "the deadline cannot be met". The
// planner checks ℓ(b) from the profile, but the executor adds what it
// measures itself (its dispatch overhead, padding to a session's batch
// size), so the prediction the router and the executor work with can break
// the plan. On an H200, a warm-up that counted opening sessions as dispatch
// overhead put lenet5's batch of one at 6.5 ms against a 5 ms SLO, and the
// only sign was a 0% attainment. The daemon reports such a placement once,
// as an event naming the numbers.

// slowStart is a model whose batch of one is predicted past its SLO on a
// gpu-let.
type slowStart struct {
	model, gpulet string
	// one is the predicted time of a batch of one, overhead the executor's
	// dispatch overhead included in it.
	one, overhead, slo time.Duration
}

func (s slowStart) key() string { return s.model + "@" + s.gpulet }

// message says what the operator sees and why.
func (s slowStart) message() string {
	return fmt.Sprintf("%s cannot meet its SLO on %s: a batch of one is predicted at %v there (%v of it the executor's dispatch overhead), over its SLO of %v; its requests there are refused",
		s.model, s.gpulet, s.one.Round(time.Microsecond), s.overhead.Round(time.Microsecond), s.slo)
}

// short says it in a status line, after the model's name.
func (s slowStart) short() string {
	return fmt.Sprintf("refused, ℓ(1) > SLO on %s: %v > %v (overhead %v)",
		s.gpulet, s.one.Round(time.Microsecond), s.slo, s.overhead.Round(time.Microsecond))
}

// slowStarts remembers the slow starts of the routes in force.
type slowStarts struct {
	mu       sync.Mutex
	reported map[string]slowStart // by key
}

// fresh returns those of now that the last call did not see, and keeps now
// as what is reported: one that recovers and breaks again is reported again.
func (s *slowStarts) fresh(now []slowStart) []slowStart {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[string]slowStart, len(now))
	var out []slowStart
	for _, st := range now {
		seen[st.key()] = st
		if _, ok := s.reported[st.key()]; !ok {
			out = append(out, st)
		}
	}
	s.reported = seen
	return out
}

// of says what model's slow starts in force are, one line per gpu-let
// (slowStart.short).
func (s *slowStarts) of(model string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, st := range s.reported {
		if st.model == model {
			out = append(out, st.short())
		}
	}
	slices.Sort(out)
	return out
}

// reportSlowStarts adds an event for each slow start not reported yet.
func (n *node) reportSlowStarts(now []slowStart) {
	for _, s := range n.slowStarts.fresh(now) {
		n.events.add(EventSLOUnreachable, store.SeverityWarning, s.message(), map[string]string{
			"model": s.model, "gpulet": s.gpulet, "batch_of_one": s.one.String(),
			"dispatch_overhead": s.overhead.String(), "slo": s.slo.String(),
		})
	}
}
