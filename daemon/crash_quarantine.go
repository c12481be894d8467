package daemon

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// executorEnded tells the crash suspects how one of g's executors, its
// generation gen, ended, and what its engine ran then (supervisor.onExit).
func (n *node) executorEnded(g *gpuletRun, gen uint64, crashed bool, running []uint64) {
	n.crashes.ended(executorGen{g.id, gen}, crashed, running, time.Now())
}

// requestQuarantined says that a request of model crashed or hung an
// executor a second time, and is refused until until: a warning event,
// which names the request by its inputs' digest.
func (n *node) requestQuarantined(model string, d inputsDigest, until time.Time) {
	short := hex.EncodeToString(d[:8])
	n.log.Warn("a request crashed or hung the model's executor twice; the same request is refused for a while",
		zap.String("model", model), zap.String("inputs_sha256", hex.EncodeToString(d[:])), zap.Time("until", until))
	n.events.add(EventRequestQuarantined, store.SeverityWarning,
		fmt.Sprintf("a request of %s (inputs sha256 %s…) crashed or hung its executor twice, the second time run alone: the same request is refused until %s, or until the model is loaded anew",
			model, short, until.UTC().Format(time.TimeOnly+" MST")),
		map[string]string{"model": model, "inputs_sha256": hex.EncodeToString(d[:]), "until": until.UTC().Format(time.RFC3339)})
}

// quarantinedAnswer refuses a request of model that crashed or hung its
// executor twice, quarantined until until.
func quarantinedAnswer(model string, until time.Time) *inferError {
	return &inferError{code: http.StatusBadRequest, reason: reasonCrashesExecutor, msg: fmt.Sprintf(
		"%s: refused: this request (the same inputs) crashed or hung the model's executor twice, the second time run alone; it is refused until %s, or until the model is loaded anew (gpuletd events --kind request_quarantined)",
		model, until.UTC().Format(time.TimeOnly+" MST"))}
}

// crashWarning says, for the model's warnings, how many of its requests
// are quarantined, and how many are suspects of a crash; "" when none.
func (n *node) crashWarning(model string) string {
	suspects, quarantined := n.crashes.counts(model, time.Now())
	switch {
	case quarantined > 0:
		w := fmt.Sprintf("quarantined requests: %d, each refused for a while since it crashed or hung the executor twice (reason crashes_executor; gpuletd events --kind request_quarantined)", quarantined)
		if suspects > 0 {
			w += fmt.Sprintf("; crash suspects: %d, each run alone", suspects)
		}
		return w
	case suspects > 0:
		return fmt.Sprintf("crash suspects: %d requests that ran in a batch that crashed or hung the executor, each run alone should it come again, and refused for a while should it do so again (gpuletd events --kind executor_restart)", suspects)
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
	}
	return &d, false, nil
}

// crashOutcome tells the crash suspects what came of a request of m with
// inputs (digest, when crashStanding computed it), sent to executor e
// (alone, when a suspect): a suspect answered is one no more; one that got
// no answer (e ended with it in flight, or its deadline passed first) may
// have been what e was running when it ended.
func (n *node) crashOutcome(e executorGen, m *repository.Model, inputs []tensor.Tensor, digest *inputsDigest, alone bool, ierr *inferError) {
	switch {
	case ierr == nil && alone:
		n.crashes.answered(m.Name, *digest)
	case ierr != nil && ierr.sent != 0 && !ierr.notRun:
		if digest == nil {
			d := digestInputs(inputs)
			digest = &d
		}
		n.crashes.lost(e, ierr.sent, lostRequest{model: m.Name, sha: m.SHA256, digest: *digest}, time.Now())
	}
}
