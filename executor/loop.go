package executor

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/internal/hrtimer"
	"go.uber.org/zap"
)

// errStopping answers requests still queued when the executor stops.
var errStopping = errors.New("executor is stopping")

// loop owns the scheduler of the gpu-let and everything it touches: the
// queued requests, the running batch, the counters. Other goroutines hand it
// work as closures through post; it runs them one at a time, so none of its
// state needs a lock.
type loop struct {
	s  *Server
	sc *sched.Scheduler

	in       chan func()
	quit     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	// The loop's one timer (wake.go), for the scheduler's next wake-up
	// and the state's next frame, whichever is first.
	timer    *hrtimer.Timer
	timerSet bool          // timer is set, for timerAt, and has not fired
	timerAt  time.Duration // the time timer is set for
	due      bool          // the scheduler has a wake-up: wakeAt, woken for at wokeFor
	wakeAt   time.Duration // the scheduler time of its next wake-up
	wokeFor  time.Duration // when to wake for it (wakeAt less the slack)
	slack    slack

	jobs       chan *job
	workerDone chan struct{}

	draining atomic.Bool
	ran      atomic.Bool // the worker has run a batch

	// Loop-owned state.
	ids      []*modelEntry
	slots    []slot
	free     []uint32
	nextID   uint64
	inflight int // requests accepted and not yet answered
	running  *job
	waiters  []chan int64
	drained  int64
	busy     time.Duration
	started  time.Time
	// State frames (state.go): the connections that watch the state and
	// the interval each asked for; whether the state changed since it
	// was last written to all of them; whether a frame waits for the
	// interval of some, and the time it is due.
	watchers map[*inferStream]time.Duration
	dirty    bool
	pubAt    time.Duration
	pubArmed bool
	// flushing are the connections with answers pending (answer).
	flushing []*inferStream

	reqBuf       []sched.Request // reused by submit
	stamp        uint64          // stateStamp at the last notification
	completions  uint64          // batches finished
	modelChanges uint64          // models added or removed

	// handing is the entry a replaced model's queue moves to while
	// handOver removes the old one; moved collects those requests.
	handing *modelEntry
	moved   []sched.Request

	// fault is the device fault a run found (fault.go), and faultSent
	// whether Serve was told.
	fault     error
	faultSent bool
}

// request is one client request: one or more rows, each scheduled as its own
// request when the model batches.
type request struct {
	stream    *inferStream
	id        uint64
	model     *modelEntry
	outputs   []string
	arrival   time.Duration
	rows      [][]tensor.Tensor // outputs per row, filled as rows finish
	remaining int
	answered  bool
	batch     int
	queue     time.Duration
	compute   time.Duration
	// input and output: readying the inputs of its batch and the outputs
	// (RunInfo), the longest over its rows' batches, as compute.
	input, output time.Duration
	read          time.Time // when its frame was read (HeldUs)
	alone         bool      // runs in a batch of its own (aloneParts)
}

// slot is one scheduled row of a request.
type slot struct {
	req    *request
	row    int
	inputs []tensor.Tensor
}

// job is one batch handed to the engine worker.
type job struct {
	seq       uint64
	model     *modelEntry
	idx       []uint32 // the rows' slots, released when the batch ends
	slots     []slot
	inputs    [][]tensor.Tensor
	start     time.Duration // scheduler time of the dispatch (may lead real time by the timer slack)
	end       time.Duration // scheduler time it is expected to end (start + ℓ)
	began     time.Time     // real time of the dispatch
	ctx       context.Context
	cancel    context.CancelFunc
	preempted bool
	// ids are the rows' requests' ids, for the running file (nil
	// without one); alone, set when a request of the batch asks to run
	// alone, marks its rows (aloneParts).
	ids   []uint64
	alone []bool
}

func newLoop(s *Server) (*loop, error) {
	l := &loop{
		s: s, in: make(chan func(), 1024), quit: make(chan struct{}), done: make(chan struct{}),
		jobs: make(chan *job, 2), workerDone: make(chan struct{}),
		started: time.Now(),
	}
	sc, err := sched.New(sched.Config{Policy: s.opts.Policy, MaxQueue: s.opts.MaxQueue}, sink{l})
	if err != nil {
		return nil, fmt.Errorf("new executor loop: %w", err)
	}
	l.sc = sc
	l.slack = slack{floor: s.opts.TimerSlack, cur: s.opts.TimerSlack}
	l.timer = hrtimer.NewTimer()
	go l.run()
	go l.worker()
	return l, nil
}

func (l *loop) now() time.Duration { return l.s.clock.Now() }

// post runs f on the loop; it returns false when the loop has ended.
func (l *loop) post(f func()) bool {
	select {
	case l.in <- f:
		return true
	case <-l.done:
		return false
	}
}

// call runs f on the loop and waits for it.
func (l *loop) call(f func()) bool {
	ch := make(chan struct{})
	if !l.post(func() { f(); close(ch) }) {
		return false
	}
	select {
	case <-ch:
		return true
	case <-l.done:
		return false
	}
}

func (l *loop) run() {
	defer close(l.done)
	// Before done: a closed loop leaves no timer's goroutine. A timerfd's
	// close fails only on a bad descriptor.
	defer func() { _ = l.timer.Close() }()
	for {
		select {
		case f := <-l.in:
			f()
		case <-l.timer.C:
			l.timerSet = false
			l.woken()
		case <-l.quit:
			l.shutdown()
			l.flush()
			return
		}
		l.rearm()
		if v := l.stateStamp(); v != l.stamp {
			l.stamp, l.dirty = v, true
		}
		l.publish()
		l.flush()
		l.reportFault()
		l.setTimer() // after the answers are written: setting a timer is a system call
	}
}

// stateStamp changes whenever the scheduler's state may have: a request
// came or went, a batch started or ended, a model came or went. Closures
// that only read (snapshots, stats) leave it alone, so watchers are not
// woken by their own reads.
func (l *loop) stateStamp() uint64 {
	st := l.sc.Stats()
	v := st.Submitted + st.Batches*3 + st.Dispatched*5 + st.Preemptions*7 + l.completions*11 + l.modelChanges*13
	for _, r := range st.Rejected {
		v += r * 17
	}
	return v
}

// rearm takes the scheduler's next wake-up, to wake for it early by the
// timer slack. A deferred batch may start only within a window as narrow
// as ℓ(|B|+1) − ℓ(|B|), tens of microseconds for some models; a wake-up
// that comes late by more than that would find the window gone. Waking
// early and advancing the scheduler to the event's time dispatches the
// batch a little early instead (its deadline is then met with room to
// spare).
func (l *loop) rearm() {
	t, ok := l.sc.NextWakeup()
	switch {
	case !ok:
		l.due = false
	case l.due && t == l.wakeAt: // woken for as planned
	default:
		l.due, l.wakeAt = true, t
		l.wokeFor = max(t-l.slack.get(), l.now())
	}
}

// shutdown answers everything still waiting and stops the worker.
func (l *loop) shutdown() {
	for i := range l.slots {
		if r := l.slots[i].req; r != nil {
			l.answerNotRun(r, errStopping.Error())
		}
	}
	if l.running != nil {
		l.running.cancel()
	}
	close(l.jobs)
	<-l.workerDone
	for _, w := range l.waiters {
		w <- l.drained
	}
}

func (l *loop) close() {
	l.stopOnce.Do(func() { close(l.quit) })
	<-l.done
}

func (l *loop) isDraining() bool { return l.draining.Load() }

// worker runs the batches the scheduler dispatches, one at a time; with
// Options.OneRunThread every one on the same operating-system thread. ONNX
// Runtime's CUDA provider keeps per-thread state for each session (CUDA and
// cuDNN handles, workspaces, memory) for every thread that ever runs it, and
// a goroutine's cgo calls land on whichever thread the Go scheduler picked:
// on an H200, lenet5 and resnet18 in one executor grew from 3.3 GiB of GPU
// memory at warm-up to 14.5 GiB after 30 s of serving. The goroutine then
// ends still locked, so its thread ends with it.
func (l *loop) worker() {
	if l.s.opts.OneRunThread {
		runtime.LockOSThread()
	}
	defer close(l.workerDone)
	var apart isolationLog // the worker's alone
	probed := probes{}
	rf := l.s.opts.Running
	for j := range l.jobs {
		var outs [][]tensor.Tensor
		var info RunInfo
		var err error
		var each []error
		check := func(err error) error { return l.checkDevice(j, err) }
		if groups := aloneParts(j); groups != nil {
			// Parts that run are answered; one that failed says so
			// alone (finish), with no other run of the batch.
			if outs, info, each, err = runParts(j, rf, groups, check); err == nil && countErrs(each) == 0 {
				each = nil
			}
		} else {
			rf.set(j.ids)
			outs, info, err = j.model.rt.Run(j.ctx, j.inputs)
			rf.clear()
			if err != nil && j.ctx.Err() == nil {
				if fault := check(err); fault != nil {
					err = fault // running its requests apart would fail alike
					if kernelFault(fault) {
						rf.set(j.ids) // for the daemon: they may be its cause
					}
				}
			}
		}
		l.ran.Store(true)
		if err != nil && !canIsolate(j, err) {
			err = probed.blame(j, err, time.Now())
		}
		if canIsolate(j, err) {
			batchErr := err
			// err: a part found the device failed for good, and finish
			// answers each request by what became of its part.
			outs, info, each, err = runApart(j, rf, check)
			if err == nil && !slices.Contains(each, nil) { // none ran apart either: the model may fail them all
				now := time.Now()
				for k := range each {
					each[k] = probed.blame(j, each[k], now)
				}
			}
			if more, ok := apart.due(time.Now()); ok {
				l.s.log.Warn("a batch failed; its requests ran again apart", zap.String("model", j.model.name),
					zap.Int("rows", len(j.slots)), zap.Int("failed_alone", countErrs(each)), zap.Error(batchErr),
					zap.Int("more_since_last_line", more))
			}
		}
		if !l.post(func() { l.finish(j, outs, info, err, each) }) {
			j.cancel()
		}
	}
}

// submit schedules a validated request, row by row. It runs on the loop.
func (l *loop) submit(r *request, rows [][]tensor.Tensor, deadline time.Duration) {
	now := l.now()
	r.arrival = now
	r.rows = make([][]tensor.Tensor, len(rows))
	r.remaining = len(rows)
	r.model.stats.requests++
	if l.fault != nil {
		l.answerNotRun(r, l.faultWords())
		return
	}
	if l.draining.Load() {
		l.answerNotRun(r, "executor is draining")
		return
	}
	if r.model.retired {
		l.answerErr(r, pb.Code_NOT_FOUND, fmt.Sprintf("model %s is not loaded", r.model.name))
		return
	}
	if lat, changed, err := l.sc.CalibrationIdle(now, r.model.id, r.model.base, &r.model.calib); err != nil {
		l.s.log.Warn("recalibrate", zap.String("model", r.model.name), zap.Error(err))
	} else if changed {
		l.recalibrated(r.model, lat)
	}
	if m := r.model; len(rows) > m.base.MaxBatch() && m.base.MaxBatch() < m.full.MaxBatch() {
		// A request's rows run as one batch: a batch cap below the
		// clients' request size rises to it (up to max_batch_size).
		m.base = m.full.Truncated(len(rows))
		l.recalibrate(now, m)
		l.s.log.Info("batch cap raised to the request's rows", zap.String("model", m.name), zap.Int("cap", m.base.MaxBatch()))
	}
	l.inflight++
	r.stream.active[r.id] = r
	reqs := l.reqBuf[:0]
	for i, in := range rows {
		idx := l.allocSlot(slot{req: r, row: i, inputs: in})
		l.nextID++
		reqs = append(reqs, sched.Request{ID: l.nextID, Model: r.model.id, Slot: idx, Arrival: now, Deadline: deadline})
	}
	// All rows at once: a batch is chosen only when every row is queued.
	_ = l.sc.SubmitAll(now, reqs)
	l.reqBuf = reqs[:0]
}

func (l *loop) allocSlot(s slot) uint32 {
	if n := len(l.free); n > 0 {
		i := l.free[n-1]
		l.free = l.free[:n-1]
		l.slots[i] = s
		return i
	}
	l.slots = append(l.slots, s)
	return uint32(len(l.slots) - 1)
}

func (l *loop) releaseSlot(i uint32) {
	l.slots[i] = slot{}
	l.free = append(l.free, i)
}

// cancel withdraws a client's request: it is answered CANCELLED now; rows
// already in a batch still run, their results are dropped.
func (l *loop) cancel(st *inferStream, id uint64) {
	if r, ok := st.active[id]; ok {
		l.answerErr(r, pb.Code_CANCELLED, "cancelled by the client")
	}
}

// streamGone drops the responses of a client that went away.
func (l *loop) streamGone(st *inferStream) {
	l.unwatch(st)
	for _, r := range st.active {
		l.answer(r, nil)
	}
}

// finish completes a batch the worker ran: err failed all its rows; each,
// when set, is each row's error from running its request apart from the
// others after the batch failed (runApart).
func (l *loop) finish(j *job, outs [][]tensor.Tensor, info RunInfo, err error, each []error) {
	now := l.now()
	j.model.running--
	l.completions++
	if l.running == j {
		l.running = nil
	}
	if j.preempted {
		// The scheduler already re-queued or rejected these rows.
		if j.model.retired && j.model.running == 0 {
			l.closeModel(j.model)
		}
		return
	}
	for _, i := range j.idx {
		l.releaseSlot(i)
	}
	took := time.Since(j.began)
	l.busy += took
	if errors.Is(err, ErrDeviceFault) {
		l.faulted(err) // before BatchEnded, which may dispatch the next batch
	}
	if err == nil && len(outs) != len(j.slots) {
		err = fmt.Errorf("engine returned %d results for a batch of %d", len(outs), len(j.slots))
	}
	m := j.model
	// A failed batch's time says nothing of ℓ, nor do the times of parts
	// run one after the other (aloneParts).
	var calib *sched.Calibration
	if err == nil && each == nil && j.alone == nil && !m.retired {
		calib = &m.calib
	}
	if lat, changed, bdErr := l.sc.BatchEnded(now, j.seq, took, m.base, calib); bdErr != nil {
		l.s.log.Error("batch done", zap.Uint64("seq", j.seq), zap.Error(bdErr))
	} else if changed {
		l.recalibrated(m, lat)
	}
	othersRan := each != nil && slices.Contains(each, nil) // a request of the batch ran apart
	st := j.model.stats
	st.batch(len(j.slots))
	compute := info.Compute
	if compute == 0 {
		compute = took
	}
	st.computeUS += compute.Microseconds() * int64(len(j.slots))
	for i, sl := range j.slots {
		r := sl.req
		if r.answered {
			continue
		}
		if errors.Is(err, ErrDeviceFault) {
			switch {
			case each != nil && errors.Is(each[i], errPartNotRun):
				l.answerNotRun(r, l.faultWords()) // another gpu-let may take it
				continue
			case each == nil || each[i] != nil:
				l.answerFaultedRun(r, j, err) // the requests held: answerHeld, below
				continue
			}
			// Its part ran before the fault: its outputs, below.
		} else if err != nil {
			// A batch of one request's rows that the model refused is
			// that request's bad input; several requests' are run again
			// apart before they get here (runApart).
			l.answerErr(r, runErrCode(err), fmt.Sprintf("run %s batch of %d: %v", r.model.name, len(j.slots), err))
			continue
		}
		if each != nil && each[i] != nil {
			code, why := apartErrCode(each[i], othersRan)
			failed := ", which failed"
			if j.alone != nil {
				failed = "" // it ran in parts from the start (aloneParts)
			}
			l.answerErr(r, code, fmt.Sprintf("run %s apart from the others of its batch of %d%s%s: %v", r.model.name, len(j.slots), failed, why, each[i]))
			continue
		}
		r.rows[sl.row] = outs[i]
		r.remaining--
		r.batch = max(r.batch, len(j.slots))
		r.queue = max(r.queue, max(j.start-r.arrival, 0))
		r.compute = max(r.compute, compute)
		r.input, r.output = max(r.input, info.Input), max(r.output, info.Output)
		if r.remaining == 0 {
			l.answerRows(r, info.Emulated)
		}
	}
	if l.fault != nil {
		l.answerHeld()
	}
	if j.model.retired && j.model.running == 0 {
		l.closeModel(j.model)
	}
}

// answerRows joins a request's rows, keeps the outputs it asked for and
// answers it.
func (l *loop) answerRows(r *request, emulated bool) {
	outs, err := joinRows(r.rows)
	if err != nil {
		l.answerErr(r, pb.Code_INTERNAL, "join rows: "+err.Error())
		return
	}
	if len(r.outputs) > 0 {
		keep := make([]tensor.Tensor, 0, len(r.outputs))
		for _, name := range r.outputs {
			for _, t := range outs {
				if t.Name == name {
					keep = append(keep, t)
				}
			}
		}
		outs = keep
	}
	r.model.stats.succeeded++
	r.model.stats.queueUS += r.queue.Microseconds()
	l.answer(r, &pb.InferResponse{
		Id: r.id, Code: pb.Code_OK, Outputs: toProto(outs), Emulated: emulated,
		BatchSize: int32(r.batch), QueueUs: r.queue.Microseconds(), ComputeUs: r.compute.Microseconds(),
		ComputeInputNs: r.input.Nanoseconds(), ComputeOutputNs: r.output.Nanoseconds(),
	})
}

// answerNotRun answers UNAVAILABLE a request the executor did not run
// (draining, stopping, its model taken off, its device failed), marked so
// that the daemon may send it to another gpu-let.
func (l *loop) answerNotRun(r *request, msg string) {
	if r.answered {
		return
	}
	r.model.stats.fail(pb.Code_UNAVAILABLE)
	resp := errorf(r.id, pb.Code_UNAVAILABLE, "%s", msg)
	resp.NotRun = true
	l.answer(r, resp)
}

func (l *loop) answerErr(r *request, code pb.Code, msg string) {
	if r.answered {
		return
	}
	r.model.stats.fail(code)
	l.answer(r, errorf(r.id, code, "%s", msg))
}

// answer sends resp (nil: nothing, the client is gone) and forgets the
// request. Later rows of it are skipped.
func (l *loop) answer(r *request, resp *pb.InferResponse) {
	if r.answered {
		return
	}
	r.answered = true
	if resp != nil {
		st := r.stream
		if len(st.pending) == 0 {
			l.flushing = append(l.flushing, st)
		}
		st.pending = append(st.pending, resp)
		st.pendingRead = append(st.pendingRead, r.read)
	}
	if _, ok := r.stream.active[r.id]; ok {
		delete(r.stream.active, r.id)
		l.inflight--
		if l.draining.Load() {
			l.drained++
			l.checkDrained()
		}
	}
}

// drain stops admission and waits until every accepted request is answered.
func (l *loop) drain(ctx context.Context) (int64, error) {
	ch := make(chan int64, 1)
	if !l.post(func() {
		l.draining.Store(true)
		l.waiters = append(l.waiters, ch)
		l.checkDrained()
	}) {
		return 0, nil
	}
	select {
	case n := <-ch:
		return n, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (l *loop) checkDrained() {
	if l.inflight > 0 {
		return
	}
	for _, w := range l.waiters {
		w <- l.drained
	}
	l.waiters = nil
}
