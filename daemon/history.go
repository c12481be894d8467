package daemon

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/profiler/store"
)

// planHistory decides what of the re-plans reaches the store's history: a
// plan when it changes what runs where, and a model's placement warning when
// its reason changes. The node re-plans every reorganize period (20 s by
// default) for rates that move a little each time; before, every re-plan
// saved a plan (about 1 KB for four small models) and a warning event per
// model it could not place, thousands of rows a day that said nothing new.
type planHistory struct {
	mu     sync.Mutex
	saved  string            // planKey of the plan saved last
	warned map[string]string // model → the placement warning recorded last
}

// planKey is what a saved plan stands for: its arrangement (gpu-let sizes,
// the models on each and their batches), whether it is schedulable and the
// models it cannot place in full.
func planKey(p *gpulet.Plan) string {
	return fmt.Sprintf("%s | schedulable %t | short %v", p.Arrangement(), p.Schedulable, slices.Sorted(maps.Keys(p.Unscheduled)))
}

// changed says whether p is worth saving: it differs from the plan saved
// last in planKey.
func (h *planHistory) changed(p *gpulet.Plan) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return planKey(p) != h.saved
}

// markSaved records that p is in the store.
func (h *planHistory) markSaved(p *gpulet.Plan) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.saved = planKey(p)
}

// warnings takes the placement warnings of one re-plan (model → why it is
// not placed, in full or at all) and returns those to record: new ones and
// ones whose reason changed. A reason that differs only in its numbers (an
// overloaded node's fair share, which moves with the rates) is the same
// reason. Models absent from this re-plan are placed again, so a later
// warning about them is recorded anew.
func (h *planHistory) warnings(now map[string]string) map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]string{}
	next := make(map[string]string, len(now))
	for name, why := range now {
		next[name] = withoutNumbers(why)
		if h.warned[name] != next[name] {
			out[name] = why
		}
	}
	h.warned = next
	return out
}

// withoutNumbers replaces every digit of s with #.
func withoutNumbers(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsDigit(r) {
			return '#'
		}
		return r
	}, s)
}

// historyPrunePeriod is how often the store's history is cut to
// history_retention.
const historyPrunePeriod = time.Hour

// pruneHistory deletes, at start and every historyPrunePeriod until ctx
// ends, the events and superseded plans older than history_retention.
func (n *node) pruneHistory(ctx context.Context) {
	t := time.NewTicker(historyPrunePeriod)
	defer t.Stop()
	for {
		n.pruneHistoryOnce(ctx, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pruneHistoryOnce deletes the events and superseded plans older than
// history_retention before now (nothing when it is 0). A store that cannot
// be written is left alone: its state says so, and the next round tries
// again.
func (n *node) pruneHistoryOnce(ctx context.Context, now time.Time) {
	keep := n.conf().HistoryRetention.D()
	if keep <= 0 {
		return
	}
	cut := now.Add(-keep)
	events, err := n.st.PruneEvents(ctx, cut)
	if err == nil {
		var plans int64
		plans, err = n.st.PrunePlans(ctx, cut)
		if plans+events > 0 {
			n.log.Info("history pruned", zap.Int64("events", events), zap.Int64("plans", plans), zap.Time("before", cut))
		}
	}
	if err != nil && !store.Unwritable(err) && ctx.Err() == nil {
		n.log.Warn("prune history", zap.Error(err))
	}
}
