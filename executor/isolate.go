package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpulet/gpuletd/executor/engine"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// canIsolate tells whether a batch that failed with err may be run again
// in parts (runApart): the model itself failed (engine.ErrRunFailed),
// the batch was not cancelled, the device did not fail for good
// (ErrDeviceFault: every part would fail alike), and it holds rows of
// several requests. A
// request whose data the model cannot take (a token id past the model's
// vocabulary, which ONNX Runtime refuses in its Gather) fails the run of
// every request batched with it; run alone, the others are answered.
func canIsolate(j *job, err error) bool {
	if err == nil || j.ctx.Err() != nil || !errors.Is(err, engine.ErrRunFailed) || errors.Is(err, ErrDeviceFault) {
		return false
	}
	for _, sl := range j.slots[1:] {
		if sl.req != j.slots[0].req {
			return true
		}
	}
	return false
}

// runApart runs a failed batch's requests again apart, on the worker,
// halving it until each part runs or holds one request (its rows
// together): each row's outputs, or the error of the smallest part it
// failed in. One bad request among n costs about 2·log2(n) runs, not n.
// It reads only the job's own copy of its slots (which request each row
// is of), never the requests themselves; rf is told what each part runs,
// and check is asked after a part failed (runParts).
func runApart(j *job, rf *RunningFile, check func(error) error) ([][]tensor.Tensor, RunInfo, []error, error) {
	reqs := requestRows(j.slots)
	return runParts(j, rf, [][][]int{reqs[:len(reqs)/2], reqs[len(reqs)/2:]}, check) // the whole batch failed already
}

// runParts runs a batch in parts, each a group of its requests (each
// request's rows), one after the other, halving a part that fails while
// it holds several requests, as runApart does. After a part failed, check
// (the device check, checkDevice; nil: none) says whether the device
// failed for good: then no more parts run, and the fault is returned,
// each row of that part failed with it and each row of a part that did
// not run with errPartNotRun (the running file naming the part that
// found it, when a kernel of its run raised it).
func runParts(j *job, rf *RunningFile, groups [][][]int, check func(error) error) ([][]tensor.Tensor, RunInfo, []error, error) {
	outs := make([][]tensor.Tensor, len(j.slots))
	errs := make([]error, len(j.slots))
	var info RunInfo
	var fault error
	var parts func(reqs [][]int)
	parts = func(reqs [][]int) {
		if fault != nil {
			return
		}
		var rows []int
		for _, r := range reqs {
			rows = append(rows, r...)
		}
		ins := make([][]tensor.Tensor, len(rows))
		for i, k := range rows {
			ins[i] = j.inputs[k]
		}
		var ids []uint64
		if rf != nil {
			ids = make([]uint64, len(rows))
			for i, k := range rows {
				ids[i] = j.ids[k]
			}
			rf.set(ids)
		}
		o, ri, err := j.model.rt.Run(j.ctx, ins)
		rf.clear()
		if err != nil && check != nil && j.ctx.Err() == nil {
			if fault = check(err); fault != nil {
				if kernelFault(fault) {
					rf.set(ids)
				}
				for _, k := range rows {
					errs[k] = fault
				}
				return
			}
		}
		info.Compute += ri.Compute
		info.Emulated = info.Emulated || ri.Emulated
		if err == nil && len(o) != len(rows) {
			err = fmt.Errorf("engine returned %d results for a batch of %d", len(o), len(rows))
		}
		if err != nil && len(reqs) > 1 && j.ctx.Err() == nil && errors.Is(err, engine.ErrRunFailed) {
			parts(reqs[:len(reqs)/2])
			parts(reqs[len(reqs)/2:])
			return
		}
		for i, k := range rows {
			if err != nil {
				errs[k] = err
			} else {
				outs[k] = o[i]
			}
		}
	}
	for _, g := range groups {
		if len(g) > 0 {
			parts(g)
		}
	}
	if fault != nil {
		for k := range errs {
			if outs[k] == nil && errs[k] == nil {
				errs[k] = errPartNotRun
			}
		}
	}
	return outs, info, errs, fault
}

// errPartNotRun marks the rows of a batch's parts that did not run: an
// earlier part found the device failed for good.
var errPartNotRun = errors.New("not run: the device failed for good in an earlier part of its batch")

// kernelFault says whether a device fault (checkDevice's) was raised by a
// kernel of the run that found it (cudart.KernelFault: an illegal address,
// a failed assert), whose requests may then be its cause, rather than by
// the device itself or another process.
func kernelFault(fault error) bool {
	kf, ok := errors.AsType[interface {
		error
		KernelFault() bool
	}](fault)
	return ok && kf.KernelFault()
}

// aloneParts are the parts a batch runs in when a request of it asks to
// run alone (pb.InferRequest.alone: it was in a batch that crashed an
// executor) and it holds others: each such request alone, then the rest
// together. Nil when the batch runs whole.
func aloneParts(j *job) [][][]int {
	if j.alone == nil {
		return nil
	}
	reqs := requestRows(j.slots)
	if len(reqs) < 2 {
		return nil
	}
	var groups [][][]int
	var rest [][]int
	for _, rows := range reqs {
		if j.alone[rows[0]] {
			groups = append(groups, [][]int{rows})
		} else {
			rest = append(rest, rows)
		}
	}
	return append(groups, rest)
}

// requestRows groups a batch's rows by request, in order.
func requestRows(slots []slot) [][]int {
	var out [][]int
	at := map[*request]int{}
	for k, sl := range slots {
		i, ok := at[sl.req]
		if !ok {
			i = len(out)
			at[sl.req] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], k)
	}
	return out
}

// countErrs counts the rows that failed alone.
func countErrs(errs []error) int {
	n := 0
	for _, err := range errs {
		if err != nil {
			n++
		}
	}
	return n
}

// runErrCode is the code a request that failed alone is answered with:
// INVALID_ARGUMENT when the model refused its data
// (engine.ErrRejectedInput) or failed on it alone (errInputsAtFault),
// UNAVAILABLE when its run was cancelled, else INTERNAL.
func runErrCode(err error) pb.Code {
	switch {
	case errors.Is(err, engine.ErrRejectedInput), errors.Is(err, errInputsAtFault):
		return pb.Code_INVALID_ARGUMENT
	case errors.Is(err, context.Canceled):
		return pb.Code_UNAVAILABLE
	}
	return pb.Code_INTERNAL
}

// errInputsAtFault marks a failed run of one request's rows after which the
// model ran a zero-filled request of its own (prober): the model and the
// device work, and what fails is that request's data.
var errInputsAtFault = errors.New("the model then ran a zero-filled request of its own: it cannot take these inputs")

// prober is a runtime that can run one zero-filled request of its warm-up
// shapes (engineModel), to tell a request the model cannot take from a
// model that fails whatever it is given.
type prober interface {
	Probe(ctx context.Context) error
}

// probeEvery is the least time between two probes of one model: within it
// the last probe's outcome stands, so that a client sending inputs the
// model fails on does not double the model's runs.
const probeEvery = time.Second

// probesKept is how many models' probes are kept before the stale ones
// are let go.
const probesKept = 64

// probes are the last probe of each model, the worker's alone.
type probes map[*modelEntry]probeOutcome

// probeOutcome is when a model was last probed and whether it ran.
type probeOutcome struct {
	at  time.Time
	ran bool
}

// blame tells, for a failed batch of one request's rows (canIsolate
// refused it), or a request of a batch none of whose requests then ran
// apart, whether that request's inputs are at fault: the model's run
// failed (not cancelled, no device fault, not already put on the inputs by
// ONNX Runtime) and the model ran a zero-filled request of its own then,
// or did within probeEvery. It returns err marked with errInputsAtFault
// when they are.
func (p probes) blame(j *job, err error, now time.Time) error {
	pr, ok := j.model.rt.(prober)
	if !ok || err == nil || j.ctx.Err() != nil || !errors.Is(err, engine.ErrRunFailed) ||
		errors.Is(err, ErrDeviceFault) || errors.Is(err, engine.ErrRejectedInput) {
		return err
	}
	last, seen := p[j.model]
	if !seen || now.Sub(last.at) >= probeEvery {
		ran := pr.Probe(j.ctx) == nil
		if j.ctx.Err() != nil {
			return err // cut short: it says nothing of the model
		}
		last = probeOutcome{at: now, ran: ran}
		p[j.model] = last
		if len(p) > probesKept {
			for m, o := range p { // models unloaded since, mostly
				if now.Sub(o.at) >= probeEvery {
					delete(p, m)
				}
			}
		}
	}
	if !last.ran {
		return err
	}
	return fmt.Errorf("%w; %w", err, errInputsAtFault)
}

// apartErrCode is the code of a request that failed when its batch ran
// again apart (runApart), and what the answer adds to say why: as
// runErrCode, and INVALID_ARGUMENT too when othersRan (another request of
// the batch ran apart) for any failure of the model's run: the model and
// the device ran the others at that moment, so what fails is this
// request's data (a size the graph cannot take though the model's dims
// allow it, whatever ONNX Runtime reports it as), the client's fault and no
// SLO violation of the node's. A failed batch of one request's rows is
// told apart by a probe instead (probes.blame).
func apartErrCode(err error, othersRan bool) (pb.Code, string) {
	code := runErrCode(err)
	if code == pb.Code_INTERNAL && othersRan && errors.Is(err, engine.ErrRunFailed) && !errors.Is(err, ErrDeviceFault) {
		return pb.Code_INVALID_ARGUMENT, " and whose other requests then ran: the model cannot take its inputs"
	}
	return code, ""
}

// isolationLogEvery is the least time between two log lines that say a
// batch failed and ran again apart: a client that keeps sending requests
// the model refuses makes a batch fail in every few, and a line for each
// would fill the log.
const isolationLogEvery = 10 * time.Second

// isolationLog says when a batch that ran again apart is worth a log line:
// the first, then the first after each isolationLogEvery, with how many
// were not said since the last line.
type isolationLog struct {
	last time.Time
	more int
}

// due records one more batch run apart at now and says whether to log it,
// with how many went unsaid since the last line.
func (il *isolationLog) due(now time.Time) (more int, ok bool) {
	if !il.last.IsZero() && now.Sub(il.last) < isolationLogEvery {
		il.more++
		return 0, false
	}
	more, il.more, il.last = il.more, 0, now
	return more, true
}
