package sched

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ms converts milliseconds to a Duration (exact for the multiples of 0.25 ms
// the tests use).
func ms(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

// linear is ℓ(b) = alpha·b + beta in ms.
func linear(t testing.TB, alphaMS, betaMS float64, maxBatch int) Latency {
	t.Helper()
	l, err := LinearLatency(ms(alphaMS), ms(betaMS), maxBatch)
	require.NoError(t, err)
	return l
}

// periodic returns n requests of one model, request i (from 1) arriving at
// start + (i−1)·gap with deadline arrival + slo; ids skip those in skip.
func periodic(model ModelID, n int, start, gap, slo time.Duration, skip ...uint64) []Request {
	var out []Request
	for i := 1; i <= n; i++ {
		id := uint64(i)
		if contains(skip, id) {
			continue
		}
		at := start + time.Duration(i-1)*gap
		out = append(out, Request{ID: id, Model: model, Arrival: at, Deadline: at + slo})
	}
	return out
}

func contains(xs []uint64, x uint64) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// dispatched is one dispatch as a test sees it.
type dispatched struct {
	Exec  int
	At    time.Duration
	Model ModelID
	IDs   []uint64
}

// rejected is one rejection as a test sees it.
type rejected struct {
	Exec int
	At   time.Duration
	ID   uint64
	Why  Reason
}

// preempted is one preemption as a test sees it.
type preempted struct {
	Exec int
	At   time.Duration
	IDs  []uint64
}

// recorder is both a Sink (for a bare Scheduler, exec 0) and an Observer (for
// a Sim); it keeps every event, and counts answers per request id.
type recorder struct {
	dispatches []dispatched
	completes  []dispatched
	rejects    []rejected
	preempts   []preempted
	answers    map[uint64]int
	late       int
	// infeasible counts dispatched batches that end after the deadline of
	// one of their requests, or whose requests are not one model's in
	// deadline order.
	infeasible int
}

func newRecorder() *recorder { return &recorder{answers: map[uint64]int{}} }

func ids(rs []Request) []uint64 {
	out := make([]uint64, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func (r *recorder) Dispatch(now time.Duration, b Batch) { r.Dispatched(0, b) }
func (r *recorder) Reject(now time.Duration, q Request, why Reason) {
	r.Rejected(0, now, q, why)
}
func (r *recorder) Preempt(now time.Duration, b Batch) { r.Preempted(0, now, b) }

func (r *recorder) Dispatched(exec int, b Batch) {
	r.dispatches = append(r.dispatches, dispatched{exec, b.Start, b.Model, ids(b.Requests)})
	for i, q := range b.Requests {
		if q.Deadline < b.End || q.Model != b.Model || (i > 0 && q.Deadline < b.Requests[i-1].Deadline) {
			r.infeasible++
			break
		}
	}
}

func (r *recorder) Completed(exec int, b Batch) {
	r.completes = append(r.completes, dispatched{exec, b.Start, b.Model, ids(b.Requests)})
	for _, q := range b.Requests {
		r.answers[q.ID]++
		if b.End > q.Deadline {
			r.late++
		}
	}
}

func (r *recorder) Preempted(exec int, now time.Duration, b Batch) {
	r.preempts = append(r.preempts, preempted{exec, now, ids(b.Requests)})
}

func (r *recorder) Rejected(exec int, now time.Duration, q Request, why Reason) {
	r.rejects = append(r.rejects, rejected{exec, now, q.ID, why})
	r.answers[q.ID]++
}

// simulate runs reqs through one gpu-let per spec and returns the record.
func simulate(t testing.TB, specs []ExecutorSpec, reqs []Request) (*recorder, SimStats) {
	t.Helper()
	rec := newRecorder()
	sim, err := NewSim(specs, rec)
	require.NoError(t, err)
	st, err := sim.Run(NewSliceSource(reqs))
	require.NoError(t, err)
	return rec, st
}

// one is a single gpu-let with one model.
func one(p Policy, id ModelID, l Latency) []ExecutorSpec {
	return []ExecutorSpec{{Config: Config{Policy: p}, Models: []ModelSpec{{ID: id, ModelConfig: ModelConfig{Latency: l}}}}}
}
