package daemon

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// executorEnded tells the crash suspects how one of g's executors, its
// generation gen, ended, and what its engine ran then (supervisor.onExit).
func (n *node) executorEnded(g *gpuletRun, gen uint64, cause endCause, running []uint64) {
	n.crashes.ended(executorGen{g.id, gen}, cause, running, time.Now())
}

// requestQuarantined says that a request of model crashed or hung an
// executor in a run of its own (the first time, or the second, run alone
// as a suspect), or faulted its GPU a second time, run alone as a
// suspect, and is refused until until: a warning event, which names the
// request by its inputs' digest.
func (n *node) requestQuarantined(model string, d inputsDigest, until time.Time) {
	short := hex.EncodeToString(d[:8])
	n.log.Warn("a request crashed or hung the model's executor, or faulted its GPU, in a run of its own; the same request is refused for a while",
		zap.String("model", model), zap.String("inputs_sha256", hex.EncodeToString(d[:])), zap.Time("until", until))
	n.events.add(EventRequestQuarantined, store.SeverityWarning,
		fmt.Sprintf("a request of %s (inputs sha256 %s…) crashed or hung its executor, or faulted its GPU, in a run of its own: the same request is refused until %s, until the model is loaded anew, or until its quarantine is lifted (gpuletd models unquarantine %s)",
			model, short, until.UTC().Format(time.TimeOnly+" MST"), model),
		map[string]string{"model": model, "inputs_sha256": hex.EncodeToString(d[:]), "until": until.UTC().Format(time.RFC3339)})
}

// quarantinedAnswer refuses a request of model that crashed or hung its
// executor in a run of its own, quarantined until until.
func quarantinedAnswer(model string, until time.Time) *inferError {
	return &inferError{code: http.StatusBadRequest, reason: reasonCrashesExecutor, msg: fmt.Sprintf(
		"%s: refused: this request (the same inputs) crashed or hung the model's executor, or faulted its GPU, in a run of its own; it is refused until %s, or until the model is loaded anew (gpuletd events --kind request_quarantined)",
		model, until.UTC().Format(time.TimeOnly+" MST"))}
}

// crashWarning says, for the model's warnings, how many of its requests
// are in a run that may never end, quarantined, and suspects of a crash;
// "" when none.
func (n *node) crashWarning(model string) string {
	suspects, quarantined, hanging := n.crashes.counts(model, time.Now())
	if hanging > 0 {
		w := fmt.Sprintf("requests with no answer even well past their deadline: %d, perhaps in a run that never ends; the same requests are refused until it ends or its executor gives up on it (reason twin_hung)", hanging)
		if rest := crashWords(suspects, quarantined); rest != "" {
			w += "; " + rest
		}
		return w
	}
	return crashWords(suspects, quarantined)
}

// crashWords says how many of a model's requests are quarantined and
// suspects; "" when none.
func crashWords(suspects, quarantined int) string {
	switch {
	case quarantined > 0:
		w := fmt.Sprintf("quarantined requests: %d, each refused for a while since it crashed or hung the executor, or faulted its GPU, in a run of its own (reason crashes_executor; gpuletd events --kind request_quarantined)", quarantined)
		if suspects > 0 {
			w += fmt.Sprintf("; crash suspects: %d, each run alone", suspects)
		}
		return w
	case suspects > 0:
		return fmt.Sprintf("crash suspects: %d requests that ran in a batch that crashed or hung the executor or faulted its GPU, each run alone should it come again, and refused for a while should it do so again (gpuletd events --kind executor_restart)", suspects)
	}
	return ""
}

// crashStanding is what becomes of a request of m with inputs as the
// crash suspects have it (crash_suspects.go): its inputs' digest, while
// its model has suspects (nil otherwise: no digest is computed), whether
// it runs alone (a suspect), or its refusal (quarantined).
func (n *node) crashStanding(m *repository.Model, inputs []tensor.Tensor) (*inputsDigest, bool, *inferError) {
	if !n.crashes.watching(m.Name) {
		return nil, false, nil
	}
	d := digestInputs(inputs)
	switch st, until := n.crashes.standingOf(m.Name, m.SHA256, d, time.Now()); st {
	case standingQuarantined:
		return &d, false, quarantinedAnswer(m.Name, until)
	case standingSuspect:
		return &d, true, nil
	case standingTwinHung:
		return &d, false, twinHungAnswer(m.Name, until)
	}
	return &d, false, nil
}

// twinHungAnswer refuses a request of model whose twin (the same inputs)
// went unanswered in a run that may never end, until until, when that
// run's executor will have given up on it.
func twinHungAnswer(model string, until time.Time) *inferError {
	return &inferError{code: http.StatusServiceUnavailable, reason: reasonTwinHung, msg: fmt.Sprintf(
		"%s: refused for now: the same request (the same inputs) got no answer even well past its deadline, in a run that may never end; so that it does not hold another gpu-let too, it is refused until that run ends or its executor gives up on it, by %s (scheduler.hang_timeout); retry then",
		model, until.UTC().Format(time.TimeOnly+" MST"))}
}

// runsNow says whether executor e may still be running request id (the
// crash suspects' runs): false only where its running file, read from the
// live executor, no longer names it. An executor the daemon cannot ask
// (being stopped: a plan retires it, a kill for its health) may be, until
// its end is known.
func (n *node) runsNow(e executorGen, id uint64) bool {
	for _, g := range n.sup.list() {
		if g.id == e.gpulet {
			ids, ok := g.runningNow(e.gen)
			return !ok || slices.Contains(ids, id)
		}
	}
	return true
}

// runs says whether g's executor gen is running request id now, as its
// running file names it.
func (g *gpuletRun) runs(gen, id uint64) bool {
	ids, ok := g.runningNow(gen)
	return ok && slices.Contains(ids, id)
}

// runningNow is what g's executor gen is running now, as its running file
// names it; ok is false where that executor cannot be asked (restarted,
// or being stopped).
func (g *gpuletRun) runningNow(gen uint64) (ids []uint64, ok bool) {
	g.mu.Lock()
	p := g.proc
	g.mu.Unlock()
	if p == nil || g.gen.Load() != gen {
		return nil, false
	}
	return p.RunningNow(), true
}

// hangLimit is how long after one of g's runs began its executor may
// still be running it before it takes it for hung: the hang floor
// (executor.Options.HangFloor, as serve gives it), and a health interval
// more, since the executor checks at its health checks.
func (n *node) hangLimit(g *gpuletRun) time.Duration {
	return executor.HangFloor(n.conf().Scheduler.HangTimeout.D(), string(g.device.Kind)) + healthInterval
}

// crashOutcome tells the crash suspects what came of a request of m with
// inputs (digest, when crashStanding computed it), sent to executor e
// (alone, when a suspect): a suspect answered is one no more; one that got
// no answer (e ended with it in flight, or its deadline passed first) may
// have been what e was running when it ended; and one whose run was still
// going even past its deadline's grace (hungUntil set: when e will have
// given up on it) may be in a run that never ends.
func (n *node) crashOutcome(e executorGen, hungUntil time.Time, m *repository.Model, inputs []tensor.Tensor, digest *inputsDigest, alone bool, ierr *inferError) {
	switch {
	case ierr == nil && alone:
		n.crashes.answered(m.Name, *digest)
	case ierr != nil && ierr.sent != 0 && !ierr.notRun:
		if digest == nil {
			d := digestInputs(inputs)
			digest = &d
		}
		n.crashes.lost(e, ierr.sent, lostRequest{model: m.Name, sha: m.SHA256, digest: *digest}, time.Now(), hungUntil)
	}
}
