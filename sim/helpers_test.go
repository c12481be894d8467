package sim

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/sim/workload"
	"github.com/stretchr/testify/require"
)

// ms converts milliseconds to a duration.
func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// dispatch is one dispatched batch as the recorder saw it.
type dispatch struct {
	Let int
	At  time.Duration
	IDs []uint64
}

// recorder is an observer that keeps every event and checks that each
// request is answered exactly once.
type recorder struct {
	t          testing.TB
	arrived    map[uint64]sched.Request
	answered   map[uint64]string
	dispatches []dispatch
	order      []time.Duration // times of every observed event
	// planned is, per dispatched batch, how long the scheduler expected
	// it to run (Batch.End − Batch.Start).
	planned []time.Duration
}

func newRecorder(t testing.TB) *recorder {
	return &recorder{t: t, arrived: map[uint64]sched.Request{}, answered: map[uint64]string{}}
}

func (r *recorder) arrivedReq(q sched.Request) {
	_, dup := r.arrived[q.ID]
	require.False(r.t, dup, "request %d arrived twice", q.ID)
	r.arrived[q.ID] = q
	r.order = append(r.order, q.Arrival)
}

func (r *recorder) answer(id uint64, how string) {
	_, ok := r.arrived[id]
	require.True(r.t, ok, "request %d answered before it arrived", id)
	prev, dup := r.answered[id]
	require.False(r.t, dup, "request %d answered twice: %s, then %s", id, prev, how)
	r.answered[id] = how
}

// observer adapts the recorder.
type recObserver struct{ r *recorder }

func (o recObserver) arrived(q sched.Request) { o.r.arrivedReq(q) }
func (o recObserver) served(q sched.Request, let int, start, end time.Duration) {
	how := "good"
	if end > q.Deadline {
		how = "late"
	}
	require.GreaterOrEqual(o.r.t, start, q.Arrival, "request %d ran before it arrived", q.ID)
	o.r.answer(q.ID, how)
}
func (o recObserver) rejected(q sched.Request, why sched.Reason) { o.r.answer(q.ID, why.String()) }
func (o recObserver) dispatched(let int, at time.Duration, b sched.Batch) {
	d := dispatch{Let: let, At: at}
	for _, q := range b.Requests {
		d.IDs = append(d.IDs, q.ID)
	}
	o.r.dispatches = append(o.r.dispatches, d)
	o.r.planned = append(o.r.planned, b.End-b.Start)
	o.r.order = append(o.r.order, at)
}

// load reads a workload from testdata.
func load(t testing.TB, name string) *workload.Workload {
	t.Helper()
	w, err := workload.Load(filepath.Join("testdata", name))
	require.NoError(t, err)
	return w
}

// run simulates w with a recorder attached and checks conservation.
func run(t testing.TB, w *workload.Workload, opts Options) (*Result, *recorder) {
	t.Helper()
	rec := newRecorder(t)
	opts.observer = recObserver{rec}
	res, err := Run(context.Background(), w, opts)
	require.NoError(t, err)
	require.Len(t, rec.answered, len(rec.arrived), "every request answered")
	require.Equal(t, uint64(len(rec.arrived)), res.Requests)
	require.Equal(t, res.Requests, res.Good+res.Late+res.Rejections(), "good + late + rejected")
	return res, rec
}
