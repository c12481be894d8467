package daemon

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/control"
)

// A model that misses its SLO on gpu-lets that stand mostly idle.
//
// The miss rule (control.Misses) answers a model's misses with more
// headroom, which buys GPU time: a larger gpu-let, or a share of one. A
// model whose gpu-lets ran batches less than half the time lacks none: its
// requests lose their time elsewhere, on the host's busy cores between the
// client and the executor, or in a batch deferred to its latest start that
// then ran late, and the headroom only moves it between gpu-lets. On two
// emulated V100s of a 2-core VM, lenet5 with a 4 ms SLO beside resnet18
// answered 94.5% of its requests within its SLO from a whole GPU that ran
// batches 8% of the time, planned by then with 100% more headroom
// (docs/BENCHMARKS.md, "Misses on an idle gpu-let"). This warning says so
// where the operator looks, and how to see where the time goes.

const (
	// idleMissBusy is the share of its uptime under which a gpu-let
	// counts as mostly idle.
	idleMissBusy = 0.5
	// idleMissRequests is the fewest requests of the model's recent window
	// the warning is given on.
	idleMissRequests = 1000
	// idleMissUp is how long a gpu-let must have run for its busy share
	// to count: a new executor's first seconds say little.
	idleMissUp = 30 * time.Second
)

// letBusy is one gpu-let's busy share since its executor started, and how
// long that is.
type letBusy struct {
	id   string
	busy float64
	up   time.Duration
}

// idleMissWarning warns when a model's recent window (w) holds more
// misses than the miss rule allows while every gpu-let it is on (lets)
// ran batches less than idleMissBusy of the time; "" otherwise.
func idleMissWarning(name string, w windowStats, lets []letBusy) string {
	if !missesOverRule(w) || len(lets) == 0 {
		return ""
	}
	var on []string
	for _, l := range lets {
		if l.up < idleMissUp || l.busy >= idleMissBusy {
			return ""
		}
		on = append(on, fmt.Sprintf("%s %.0f%%", l.id, 100*l.busy))
	}
	slices.Sort(on)
	return fmt.Sprintf("%.1f%% of its last %d requests were answered within its SLO on gpu-lets that ran batches a small part of the time (%s since their executors started): "+
		"they lack no GPU time, which more headroom or a larger gpu-let would add; the time goes on the host or in batches that ran late. "+
		"To see where: gpuletd trace set --model %s trace_level=TIMESTAMPS trace_rate=10, then gpuletd trace summary",
		math.Floor(1000*w.Attainment+1e-6)/10, w.Requests, strings.Join(on, ", "), name)
}

// missesOverRule says that a model's recent window holds enough requests
// to judge, and more misses among them than the miss rule allows.
func missesOverRule(w windowStats) bool {
	return w.Requests >= idleMissRequests && w.Attainment < 1-control.MissFraction
}

// busyOf is the busy share and uptime of the gpu-lets that name is placed
// on, as their executors last pushed them; a gpu-let that pushed nothing
// yet is left out.
func (n *node) busyOf(name string, now time.Time) []letBusy {
	var out []letBusy
	for _, g := range n.sup.list() {
		if !slices.Contains(g.modelNames(), name) {
			continue
		}
		if busy, up, ok := g.busyRatio(now); ok {
			out = append(out, letBusy{id: g.id, busy: busy, up: up})
		}
	}
	return out
}
