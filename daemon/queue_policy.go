package daemon

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// levelHolds counts, by model and priority level, the requests held now of
// the levels whose queue policy bounds them (a config.pbtxt's
// priority_queue_policy max_queue_size), for the concurrent handlers.
type levelHolds struct {
	mu sync.Mutex
	n  map[levelKey]int
}

type levelKey struct {
	model string
	level int
}

// hold counts one more request of model at level, unless most are held
// already; release uncounts it once it is answered.
func (h *levelHolds) hold(model string, level, most int) (release func(), ok bool) {
	k := levelKey{model, level}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n[k] >= most {
		return nil, false
	}
	if h.n == nil {
		h.n = map[levelKey]int{}
	}
	h.n[k]++
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.n[k]--; h.n[k] == 0 {
			delete(h.n, k)
		}
	}, true
}

// levelFull is the answer to a request of a priority level that holds as
// many requests as its queue policy allows.
func levelFull(model string, level, most int) *inferError {
	return &inferError{code: http.StatusServiceUnavailable, reason: reasonQueueFull, ownLimit: true,
		msg: fmt.Sprintf("%s: %d requests of priority level %d are being served, the most its priority_queue_policy's max_queue_size allows; retry later", model, most, level)}
}

// timeoutWords says, after a refusal for want of time, what set the
// deadline: the timeout a request ran under, the one it asked for or that
// of its queue policy (policy names the field), shorter than its model's
// SLO.
func timeoutWords(timeout, asked, slo time.Duration, policy string) string {
	from := "its timeout parameter"
	if timeout != asked {
		from = "the model's queue policy (" + policy + ".default_timeout_microseconds)"
	}
	return fmt.Sprintf("; its timeout of %v, from %s, ends before the SLO's %v", timeout, from, slo)
}
