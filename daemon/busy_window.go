package daemon

import (
	"sync"
	"time"
)

// How busy a gpu-let is now: the share of the last busyWindow its executor
// ran batches. Its executor says how long it has run batches since it
// started (ExecutorState.BusyUs) in every state it pushes; the share since
// the start, which the first status showed, moved ever more slowly the
// longer the executor ran (a gpu-let busy 90% for an hour read 45% half an
// hour after its load stopped, and one that took a load an hour after its
// start read near 0 for minutes), where an operator reads it as
// nvidia-smi's utilisation: what the device does now.

const (
	// busyWindow is how far back the busy share looks.
	busyWindow = 10 * time.Second
	// busySampleEvery is the least time between the samples kept: an
	// executor that runs batches pushes its state after each.
	busySampleEvery = time.Second
	// busySamplesKept bounds the samples: a little more than a window's.
	busySamplesKept = 16
)

// busySample is what an executor had run by a time.
type busySample struct {
	at   time.Time
	busy time.Duration
}

// busyHistory keeps samples of an executor's busy time, about a second
// apart, to say its busy share over the last busyWindow.
type busyHistory struct {
	mu      sync.Mutex
	started time.Time    // the executor's start, whose busy time was 0
	samples []busySample // oldest first
}

// add records that the executor had run batches for busy by at, keeping
// it when the last sample kept is busySampleEvery older. A state of
// another executor (another start) begins the history anew.
func (h *busyHistory) add(started, at time.Time, busy time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !started.Equal(h.started) {
		h.started = started
		h.samples = h.samples[:0]
	}
	if n := len(h.samples); n > 0 && at.Sub(h.samples[n-1].at) < busySampleEvery {
		return
	}
	if len(h.samples) == busySamplesKept {
		h.samples = append(h.samples[:0], h.samples[1:]...)
	}
	h.samples = append(h.samples, busySample{at: at, busy: busy})
}

// ratio is the share of the busyWindow before now that the executor ran
// batches, given its latest state (busy by at), from what it had run by
// the window's start (busyAt, between the samples around it; the start's
// 0 before the first). False before the executor's start is known.
func (h *busyHistory) ratio(now time.Time, latest busySample) (float64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started.IsZero() || !now.After(h.started) {
		return 0, false
	}
	from := now.Add(-busyWindow)
	base := busySample{at: h.started}
	next := latest
	for i := 0; i <= len(h.samples); i++ {
		s := latest // after the samples kept
		if i < len(h.samples) {
			s = h.samples[i]
		}
		if s.at.After(from) {
			next = s
			break
		}
		base = s
	}
	switch {
	case !latest.at.After(from):
		// Nothing pushed within the window: no batch ended in it.
		return 0, true
	case base.at.Before(from):
		base = busyAt(base, next, from)
	}
	span := now.Sub(base.at)
	if span <= 0 {
		return 0, false
	}
	return min(1, max(0, float64(latest.busy-base.busy)/float64(span))), true
}

// busyAt is what the executor had run by t, between samples a and b
// around it: on a line between them when they are about a sample apart;
// otherwise the executor pushed nothing between them, which it does after
// any batch, so it ran what b adds at most b.at-t before b (all of it, as
// much as fits, after t).
func busyAt(a, b busySample, t time.Time) busySample {
	gap := b.at.Sub(a.at)
	if gap <= 0 {
		return busySample{at: t, busy: b.busy}
	}
	if gap <= 2*busySampleEvery {
		return busySample{at: t, busy: a.busy + time.Duration(float64(b.busy-a.busy)*float64(t.Sub(a.at))/float64(gap))}
	}
	return busySample{at: t, busy: max(a.busy, b.busy-b.at.Sub(t))}
}
