package executor

import (
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
)

// changed records that the loop's state moved and wakes the watchers.
func (l *loop) changed() {
	l.version++
	l.subsMu.Lock()
	for ch := range l.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	l.subsMu.Unlock()
}

func (l *loop) subscribe() chan struct{} {
	ch := make(chan struct{}, 1)
	l.subsMu.Lock()
	l.subs[ch] = true
	l.subsMu.Unlock()
	return ch
}

func (l *loop) unsubscribe(ch chan struct{}) {
	l.subsMu.Lock()
	delete(l.subs, ch)
	l.subsMu.Unlock()
}

// snapshot returns the state the router needs and its version.
func (l *loop) snapshot() (*pb.ExecutorState, uint64) {
	var st *pb.ExecutorState
	var ver uint64
	l.call(func() {
		now := l.now()
		l.sc.Advance(now)
		ver = l.version
		st = &pb.ExecutorState{AtUnixNs: l.s.toWall(now), FreeAtUnixNs: l.s.toWall(now), Draining: l.draining.Load(),
			BusyUs: l.busy.Microseconds(), StartedUnixNs: l.started.UnixNano()}
		for _, m := range l.ids {
			if m == nil {
				continue
			}
			rs, err := l.sc.RouteState(now, m.id)
			if err != nil {
				continue
			}
			st.FreeAtUnixNs = l.s.toWall(rs.FreeAt)
			ms := &pb.ModelState{Name: m.name, Queued: int32(rs.Queued), Batch: int32(rs.Size), AheadNs: int64(rs.Ahead), DispatchAt: int32(rs.DispatchAt),
				IdleRule: rs.IdleRule, Batches: m.stats.batches, BatchedRequests: m.stats.batched}
			if rs.Queued > 0 {
				ms.ExecUnixNs = l.s.toWall(rs.Exec)
				ms.LatestUnixNs = l.s.toWall(rs.Latest)
				ms.DeadlineUnixNs = l.s.toWall(rs.Deadline)
			}
			st.Models = append(st.Models, ms)
		}
	})
	if st == nil {
		st = &pb.ExecutorState{}
	}
	return st, ver
}

// stats builds the Stats answer.
func (l *loop) stats() *pb.StatsResponse {
	out := &pb.StatsResponse{}
	l.call(func() {
		out.BusyUs = l.busy.Microseconds()
		out.UptimeUs = time.Since(l.started).Microseconds()
		seen := map[*modelEntry]bool{}
		add := func(m *modelEntry) {
			if m == nil || seen[m] {
				return
			}
			seen[m] = true
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
