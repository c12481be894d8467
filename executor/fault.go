package executor

import (
	"errors"
	"fmt"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"go.uber.org/zap"
)

// A device fault: the engine's device can run nothing more in this process
// (a CUDA context that holds an error for good, as an illegal memory access
// leaves it, or a batch that never ends). The executor then answers the
// batch that found it INTERNAL, hands every other request it holds back
// unrun (answerNotRun: the daemon may send it to another gpu-let), stops
// taking more and ends Serve with ErrDeviceFault, so that the process exits
// with ExitDeviceFault and the daemon starts a new one, which gets a new
// context.

// ErrDeviceFault is wrapped by Serve's error after the device failed for
// good (Options.DeviceCheck).
var ErrDeviceFault = errors.New("the device can run nothing more in this process")

// ExitDeviceFault is the executor process's exit status after a device
// fault (sysexits' EX_TEMPFAIL: start it again); the daemon names the
// fault in its restart event.
const ExitDeviceFault = 75

// ErrRunHung is wrapped, beside ErrDeviceFault, by the fault of an
// executor without a device check (the CPU's) whose run did not end: a custom operator that loops or waits for good, a
// deadlock. Only a new process frees the thread that runs the engine.
var ErrRunHung = errors.New("a run did not end")

// ExitRunHung is the executor process's exit status after ErrRunHung; the
// daemon takes the requests that run then for suspects, as a crash's.
const ExitRunHung = 76

// checkDevice asks Options.DeviceCheck, after a run of j that failed with
// err (not cancelled), whether the device still runs work; it returns err
// joined with the fault, naming the batch, when it does not, else nil. It
// runs on the worker, the thread that runs the engine.
func (l *loop) checkDevice(j *job, err error) error {
	check := l.s.opts.DeviceCheck
	if check == nil {
		return nil
	}
	fault := check()
	if fault == nil {
		return nil
	}
	return fmt.Errorf("%w: %w (found when a batch of %d of %s failed: %w)", ErrDeviceFault, fault, len(j.slots), j.model.name, err)
}

// Hung batches: a batch that has run HangFactor times its planned time,
// and at least Options.HangFloor, is taken for a device that no longer
// finishes its work (a kernel that never ends, a GPU that stopped
// processing): a device fault; on an executor without a device check, a
// run that does not end (ErrRunHung). No batch a device runs as planned
// comes near: the largest planned batches take a second or so.
const (
	HangFactor       = 20
	DefaultHangFloor = 30 * time.Second
	// DefaultHangFloorCPU is the floor of an executor on the CPU
	// (ProcessOptions.HangFloor): a hung run holds its gpu-let's models'
	// requests, which the router sends elsewhere once the run is far past
	// its end (sched.OverrunFloor), and a client that retries the request
	// that hung may hang another gpu-let meanwhile.
	DefaultHangFloorCPU = 5 * time.Second
)

// checkDeviceAtHealth is what a health check asks of the device: with a
// batch running past its hang limit (Options.HangFloor), a device fault
// (on an executor without a device check too, ErrRunHung; its first batch
// too); with none running, once the gpu-let has run a batch (its context
// exists then), Options.DeviceCheck. Under MPS a fatal fault of one client is
// reported to every client of the GPU, and the MPS server takes no new
// client until all of them have exited: an executor without traffic would
// otherwise hold the GPU's restarts up for good. Health calls it, every
// health interval.
func (l *loop) checkDeviceAtHealth() {
	idle := false
	if !l.call(func() {
		if l.fault != nil {
			return
		}
		if j := l.running; j != nil {
			if err := l.hung(j, time.Since(j.began)); err != nil {
				l.faulted(err)
				for _, sl := range j.slots {
					l.answerFaultedRun(sl.req, j, err)
				}
				l.answerHeld()
			}
			return
		}
		idle = true
	}) || !idle || l.s.opts.DeviceCheck == nil || !l.ran.Load() {
		return
	}
	err := l.s.opts.DeviceCheck()
	if err == nil {
		return
	}
	fault := fmt.Errorf("%w: %w (found while no batch ran)", ErrDeviceFault, err)
	l.post(func() {
		l.faulted(fault)
		l.answerHeld()
	})
}

// hung says whether batch j, running for ran, is past its hang limit: a
// device fault naming it; nil when it is not.
func (l *loop) hung(j *job, ran time.Duration) error {
	planned := j.end - j.start
	limit := max(HangFactor*planned, l.s.opts.HangFloor)
	if ran < limit {
		return nil
	}
	if l.s.opts.DeviceCheck == nil {
		return fmt.Errorf("%w: %w: a batch of %d of %s has run for %v, planned for %v: its run does not end (a custom operator that loops or waits for good, a deadlock)",
			ErrDeviceFault, ErrRunHung, len(j.slots), j.model.name, ran.Round(time.Millisecond), planned.Round(time.Microsecond))
	}
	return fmt.Errorf("%w: a batch of %d of %s has run for %v, planned for %v: the device does not finish its work",
		ErrDeviceFault, len(j.slots), j.model.name, ran.Round(time.Millisecond), planned.Round(time.Microsecond))
}

// faulted records a device fault, which stops admission and dispatch
// (sink.Dispatch runs nothing more), before the scheduler hears that the
// batch that found it ended; run reports it to Serve once the answers are
// written.
func (l *loop) faulted(err error) {
	if l.fault != nil {
		return
	}
	l.fault = err
	l.draining.Store(true)
	what := "device fault"
	if errors.Is(err, ErrRunHung) {
		what = "a run did not end"
	}
	l.s.log.Error(what+": answering every request held and exiting, for a new process", zap.Error(err))
}

// answerFaultedRun answers INTERNAL request r of batch j, whose run found
// the device fault err: the run failed, and a client should not send again
// by itself a request that may be what faulted the device.
func (l *loop) answerFaultedRun(r *request, j *job, err error) {
	if r.answered {
		return
	}
	r.model.stats.fail(pb.Code_INTERNAL)
	resp := errorf(r.id, pb.Code_INTERNAL, "run %s batch of %d: %v; the executor restarts", j.model.name, len(j.slots), err)
	resp.DeviceFault = true
	l.answer(r, resp)
}

// answerHeld hands back unrun every request the loop holds after a device
// fault (those of the batch that found it are answered first,
// answerFaultedRun).
func (l *loop) answerHeld() {
	for i := range l.slots {
		if r := l.slots[i].req; r != nil {
			l.answerNotRun(r, l.faultWords())
		}
	}
}

// faultWords is what a request held or sent after a device fault is
// answered.
func (l *loop) faultWords() string {
	return fmt.Sprintf("executor restarting: %v", l.fault)
}

// reportFault hands the fault to Serve, once, after its answers are
// written.
func (l *loop) reportFault() {
	if l.fault == nil || l.faultSent {
		return
	}
	l.faultSent = true
	select {
	case l.s.faults <- l.fault:
	default:
	}
}
