package executor

import (
	"errors"
	"fmt"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"go.uber.org/zap"
)

// A device fault: the engine's device can run nothing more in this process
// (a CUDA context that holds an error for good, as an illegal memory access
// leaves it). The executor then answers every request it holds UNAVAILABLE,
// stops taking more and ends Serve with ErrDeviceFault, so that the process
// exits with ExitDeviceFault and the daemon starts a new one, which gets a
// new context. Without this the process stayed up, answered its health
// checks, and failed every request it was sent from then on.

// ErrDeviceFault is wrapped by Serve's error after the device failed for
// good (Options.DeviceCheck).
var ErrDeviceFault = errors.New("the device can run nothing more in this process")

// ExitDeviceFault is the executor process's exit status after a device
// fault (sysexits' EX_TEMPFAIL: start it again); the daemon names the
// fault in its restart event.
const ExitDeviceFault = 75

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

// checkIdleDevice asks Options.DeviceCheck whether the device still runs
// work while the gpu-let runs no batch, once it has run one (its context
// exists then). Under MPS a fatal fault of one client is reported to every
// client of the GPU, and the MPS server takes no new client until all of
// them have exited: an executor without traffic would otherwise hold the
// GPU's restarts up for good. Health calls it, every health interval.
func (l *loop) checkIdleDevice() {
	if l.s.opts.DeviceCheck == nil || !l.ran.Load() {
		return
	}
	idle := false
	if !l.call(func() { idle = l.running == nil && l.fault == nil }) || !idle {
		return
	}
	fault := l.s.opts.DeviceCheck()
	if fault == nil {
		return
	}
	err := fmt.Errorf("%w: %w (found while no batch ran)", ErrDeviceFault, fault)
	l.post(func() {
		l.faulted(err)
		l.answerHeld()
	})
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
	l.s.log.Error("device fault: answering every request held and exiting, for a new process", zap.Error(err))
}

// answerHeld answers every request the loop holds after a device fault
// (those of the batch that found it first, by finish).
func (l *loop) answerHeld() {
	for i := range l.slots {
		if r := l.slots[i].req; r != nil {
			l.answerErr(r, pb.Code_UNAVAILABLE, l.faultWords())
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
