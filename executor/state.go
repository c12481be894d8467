package executor

import (
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/internal/monoclock"
)

// State frames: the router's view of this gpu-let.
//
// A connection that sends a watch frame gets a state frame whenever the
// scheduler's state changed, at most once every interval it asked for. The
// loop writes them itself at the end of the iteration that changed the
// state, on the connection that carries the answers: no goroutine of its
// own, no call back into the loop, no stream of its own. Measured on the
// 2-vCPU VM (`gpuletd bench http --binary --rate 400 --device cpu`), the
// gRPC stream that did this before took 150–240 µs of the executor's CPU
// per request, more than the inference.

// watch subscribes a framed connection to state frames, at most one every
// every, and sends it the current state at once.
func (l *loop) watch(st *inferStream, every time.Duration) {
	if l.watchers == nil {
		l.watchers = map[*inferStream]time.Duration{}
	}
	l.watchers[st] = every
	now := l.now()
	st.out.push(&pb.InferResponse{State: l.state(now)})
	st.published = now
}

// unwatch drops a connection that went away.
func (l *loop) unwatch(st *inferStream) { delete(l.watchers, st) }

// publish writes the state to every watcher whose interval has passed
// since its last frame, and sets the publish timer for the others. It is
// called at the end of every iteration of the loop. A watcher that is
// being answered in this iteration gets the state with its last answer,
// whatever its interval: that costs no write of its own. While a batch runs
// a change waits for the batch's answers, or for an interval into the
// batch: the daemon's router already counted what it routed here, and at
// 400 req/s of lenet5 on the CPU a frame at every batch's start cost the
// executor 15–30 µs of CPU per request (docs/BENCHMARKS.md).
func (l *loop) publish() {
	if !l.dirty || len(l.watchers) == 0 {
		return
	}
	now := l.now()
	next := time.Duration(-1)
	var st *pb.ExecutorState
	for w, every := range l.watchers {
		if n := len(w.pending); n > 0 {
			if st == nil {
				st = l.state(now)
			}
			w.pending[n-1].State = st
			w.published = now
			continue
		}
		due := w.published + every
		if r := l.running; r != nil {
			// The router counted the batch it routed here, and the
			// batch's answers will carry the state. Only a batch
			// expected to run past an interval is worth a frame of its
			// own, an interval into it. (No timer for the others: arming
			// one wakes a thread of the process.)
			if r.end <= r.start+every {
				continue
			}
			due = max(due, r.start+every)
		}
		if now < due {
			if next < 0 || due < next {
				next = due
			}
			continue
		}
		if st == nil {
			st = l.state(now)
		}
		w.out.push(&pb.InferResponse{State: st})
		w.published = now
	}
	if next < 0 {
		// Published to all (with answers, perhaps, before the frame was
		// due: the timer need not wake for it).
		l.dirty, l.pubArmed = false, false
		return
	}
	if !l.pubArmed || next < l.pubAt {
		l.pubAt, l.pubArmed = next, true
	}
}

// flush writes each connection's pending answers with one write.
func (l *loop) flush() {
	if len(l.flushing) == 0 {
		return
	}
	now := time.Now()
	for i, st := range l.flushing {
		for j, read := range st.pendingRead {
			if !read.IsZero() {
				st.pending[j].HeldUs = max(now.Sub(read).Microseconds(), 1)
			}
		}
		st.out.pushAll(st.pending)
		clear(st.pending)
		clear(st.pendingRead)
		st.pending, st.pendingRead = st.pending[:0], st.pendingRead[:0]
		l.flushing[i] = nil
	}
	l.flushing = l.flushing[:0]
}

// state is the state the router needs, as of now (on the loop).
func (l *loop) state(now time.Duration) *pb.ExecutorState {
	st := &pb.ExecutorState{AtMonoNs: l.s.toHost(now), FreeAtMonoNs: l.s.toHost(now), Draining: l.draining.Load(),
		BusyUs: l.busy.Microseconds(), StartedMonoNs: monoclock.Of(l.started)}
	for _, m := range l.ids {
		if m == nil {
			continue
		}
		rs, err := l.sc.RouteState(now, m.id)
		if err != nil {
			continue
		}
		st.FreeAtMonoNs = l.s.toHost(rs.FreeAt)
		ms := &pb.ModelState{Name: m.name, Queued: int32(rs.Queued), Batch: int32(rs.Size), AheadNs: int64(rs.Ahead), DispatchAt: int32(rs.DispatchAt),
			IdleRule: rs.IdleRule, IdleCut: rs.IdleCut, Batches: m.stats.batches, BatchedRequests: m.stats.batched, LatencyFactor: m.calib.Factor(),
			Failed: m.stats.failed, Requests: m.stats.requests}
		if rs.Queued > 0 {
			ms.ExecMonoNs = l.s.toHost(rs.Exec)
			ms.LatestMonoNs = l.s.toHost(rs.Latest)
			ms.DeadlineMonoNs = l.s.toHost(rs.Deadline)
		}
		st.Models = append(st.Models, ms)
	}
	return st
}

// stats builds the Stats answer.
func (l *loop) stats() *pb.StatsResponse {
	out := &pb.StatsResponse{}
	l.call(func() {
		out.BusyUs = l.busy.Microseconds()
		out.UptimeUs = time.Since(l.started).Microseconds()
		seen := map[*modelStats]bool{} // a reload's entry shares its predecessor's
		add := func(m *modelEntry) {
			if m == nil || seen[m.stats] {
				return
			}
			seen[m.stats] = true
			st := m.stats
			ms := &pb.ModelStats{
				Name: m.name, Requests: st.requests, Succeeded: st.succeeded, Batches: st.batches,
				BatchedRequests: st.batched, QueueUsSum: st.queueUS, ComputeUsSum: st.computeUS,
				Failures: map[string]int64{}, BatchSizes: map[int32]int64{},
			}
			for k, v := range st.failures {
				ms.Failures[k] = v
			}
			for k, v := range st.batchSizes {
				ms.BatchSizes[k] = v
			}
			out.Models = append(out.Models, ms)
		}
		for _, m := range l.ids {
			add(m)
		}
	})
	return out
}
