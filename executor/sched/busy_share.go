package sched

import (
	"math"
	"time"
)

// The idle rule at low load.
//
// The idle rule (gain.go) lets a batch wait on a free gpu-let for one more
// request that would save GPU time. That time is worth waiting for only
// where later work would queue behind it: on a gpu-let that runs batches a
// small part of the time it buys nothing, and the wait is latency the
// request carries to the client for no gain (on a busy host, into its SLO:
// lenet5 at 100 req/s with a 4 ms SLO on a whole emulated V100, 8% busy,
// waited 1.8 ms at p50 for batches of 1.1 on average). So the bound scales
// with the gpu-let's recent busy share: in full from IdleBusyFull up, as
// before, and down to nothing on an idle gpu-let.

// IdleBusyFull is the busy share from which the idle rule waits its whole
// bound; below it the bound shrinks in proportion.
const IdleBusyFull = 0.5

// IdleBusyWindow is the time constant of the busy share the idle rule
// reads: an exponentially weighted share of the gpu-let's recent time that
// it ran batches.
const IdleBusyWindow = time.Second

// busyShare is a gpu-let's busy share, weighted to recent time with time
// constant IdleBusyWindow, as of at (the end of its last batch). It keeps
// the free share, so that its zero value is a gpu-let counted busy: a new
// one waits the idle rule's whole bound, as before, until its time shows it
// free.
type busyShare struct {
	free float64
	at   time.Duration
}

// ran counts a batch that ran from start to end, free since the last.
func (b *busyShare) ran(start, end time.Duration) {
	b.free = 1 - b.decayed(start)
	if end > start {
		b.free *= math.Exp(-float64(end-start) / float64(IdleBusyWindow))
	}
	b.at = max(end, b.at)
}

// decayed is the busy share at t with the gpu-let free since at.
func (b *busyShare) decayed(t time.Duration) float64 {
	busy := 1 - b.free
	if t <= b.at {
		return busy
	}
	return busy * math.Exp(-float64(t-b.at)/float64(IdleBusyWindow))
}

// idleScale is the part of its idle bound a batch waits when the gpu-let
// has been free since the share's last batch and a request came at t.
func (b *busyShare) idleScale(t time.Duration) float64 {
	return min(1, b.decayed(t)/IdleBusyFull)
}
