package sim

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/executor/sched"
)

// series accumulates a quantity over time into buckets of equal width over
// [0, span): each bucket holds the integral of the quantity over it.
type series struct {
	width time.Duration
	b     []float64 // integral over the bucket, in value × ns
}

func newSeries(span, width time.Duration) series {
	n := int((span + width - 1) / width)
	return series{width: width, b: make([]float64, max(n, 1))}
}

// add adds value v held over [from, to).
func (s *series) add(from, to time.Duration, v float64) {
	span := time.Duration(len(s.b)) * s.width
	from, to = max(from, 0), min(to, span)
	for from < to {
		i := int(from / s.width)
		end := min(to, time.Duration(i+1)*s.width)
		s.b[i] += v * float64(end-from)
		from = end
	}
}

// means returns each bucket's mean value over [0, span) (the last bucket
// over its part inside span).
func (s *series) means(span time.Duration) []float64 {
	out := make([]float64, len(s.b))
	for i, v := range s.b {
		w := min(s.width, span-time.Duration(i)*s.width)
		if w > 0 {
			out[i] = v / float64(w)
		}
	}
	return out
}

// window counts the requests that arrived in one violation window.
type window struct {
	requests, good, late, rejected uint64
}

// modelStats are one model's counters.
type modelStats struct {
	requests, good, late uint64
	rejected             [numReasons]uint64
	hist                 *hdrhistogram.Histogram // end-to-end latency of served requests, µs
	batches              []uint64                // completed batches by size
}

// numReasons sizes per-reason tables (sched.Reason values are small).
const numReasons = 16

func newModelStats() modelStats {
	return modelStats{hist: hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)}
}

// win returns the window a request arriving at t counts in (nil past the
// offered time).
func (e *engine) win(t time.Duration) *window {
	i := int(t / e.set.window)
	if i < 0 || i >= len(e.windows) {
		return nil
	}
	return &e.windows[i]
}

// reject answers a request that will not be served.
func (e *engine) reject(r sched.Request, why sched.Reason) { e.rejectAt(nil, r, why) }

// rejectAt answers a request that will not be served, rejected by gpu-let
// from (nil: by the node, before any gpu-let); a pipeline's request may be
// rerouted instead (pipeRejected).
func (e *engine) rejectAt(from *glet, r sched.Request, why sched.Reason) {
	pr := e.preqs[r.ID]
	if pr != nil && e.pipeRejected(from, pr, r, why) {
		return
	}
	m := e.models[r.Model]
	if int(why) < numReasons {
		m.st.rejected[why]++
	}
	if pr == nil {
		if w := e.win(r.Arrival); w != nil {
			w.rejected++
		}
	}
	if e.set.obs != nil {
		e.set.obs.rejected(r, why)
	}
}

// served records a request its batch finished at end.
func (e *engine) served(r sched.Request, l *glet, start, end time.Duration) {
	m := e.models[r.Model]
	good := end <= r.Deadline
	if good {
		m.st.good++
	} else {
		m.st.late++
	}
	_ = m.st.hist.RecordValue(int64((end - r.Arrival) / time.Microsecond))
	if e.set.obs != nil {
		e.set.obs.served(r, l.idx, start, end)
	}
	if pr := e.preqs[r.ID]; pr != nil {
		e.pipeServed(pr, r, end)
		return
	}
	if w := e.win(r.Arrival); w != nil {
		if good {
			w.good++
		} else {
			w.late++
		}
	}
}

// gpuStarts notes that a gpu-let of g started running a batch.
func (e *engine) gpuStarts(g *gpu, now time.Duration) {
	if g.running == 0 {
		g.busySince = now
	}
	g.running++
}

// gpuStops notes that a gpu-let of g stopped running a batch.
func (e *engine) gpuStops(g *gpu, now time.Duration) {
	g.running--
	if g.running == 0 {
		e.busy[g.idx].add(g.busySince, now, 1)
	}
}

// sizesChange notes that the sum of the sizes of the gpu-lets in use
// changes at now by delta percent.
func (e *engine) sizesChange(now time.Duration, delta int) {
	e.sizes.add(e.sizeAt, now, float64(e.sizeSum))
	e.sizeAt = now
	e.sizeSum += delta
}

// tallies is every model's counts for the miss rule (control.Tally), as
// the daemon counts them: answers, and of them those late or refused for
// want of room (past their deadline, dropped from a queue's head, a full
// queue, preempted). Refusals over an overloaded node's share, and requests
// no gpu-let could take or whose model was moved away, are not counted.
func (e *engine) tallies() map[string]control.Tally {
	out := make(map[string]control.Tally, len(e.models))
	for _, m := range e.models {
		st := &m.st
		missed := st.late + st.rejected[sched.DeadlineUnreachable] + st.rejected[sched.Dropped] +
			st.rejected[sched.QueueFull] + st.rejected[sched.Preempted]
		out[m.name] = control.Tally{Answered: st.good + missed, Missed: missed}
	}
	return out
}
