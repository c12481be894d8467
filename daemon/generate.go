package daemon

import (
	"net/http"
	"time"

	"github.com/gpulet/gpuletd/kserve"
)

// handleGenerate serves Triton's generate extension for one model
// (kserve.GenerateToInfer): the body is translated into an inference
// request and takes handleInfer's path (the model's share, the body's
// limits, the SLO, the statistics and metrics, a trace), and the answer is
// translated back. With stream, as /generate_stream, the answer is one
// server-sent event, a model that is not decoupled answering once; a
// request that fails is answered as /generate answers it, before any event.
func (n *node) handleGenerate(w http.ResponseWriter, r *http.Request, stream bool) {
	arrival := time.Now()
	m, ok := n.servedModel(w, r)
	if !ok {
		return
	}
	r, tr, raw, release, ierr := n.restArrival(r, m, arrival)
	defer release()
	var body []byte
	if ierr == nil {
		var err error
		if body, err = kserve.GenerateToInfer(raw, tensorMetadata(m, m.Inputs)); err != nil {
			ierr = badRequest("%v", err)
		}
	}
	var resp *inferAnswer
	if ierr == nil {
		plain := r.Clone(r.Context())
		plain.Header.Del(kserve.HeaderContentLength) // the translation is JSON alone
		resp, ierr = n.inferREST(plain, body, m, arrival)
	}
	var out []byte
	var batch int32
	if resp != nil {
		defer resp.release()
		batch = resp.batch
		var err error
		if out, err = kserve.InferToGenerate(resp.body.Bytes()); err != nil {
			ierr = &inferError{code: http.StatusInternalServerError, reason: reasonInternal, msg: err.Error()}
		}
	}
	if !n.restOutcome(w, m, arrival, batch, tr, ierr) {
		return
	}
	if stream {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		out = append(append([]byte("data: "), out...), '\n', '\n')
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	if _, err := w.Write(out); err != nil {
		n.metrics.abandoned.WithLabelValues(m.Name).Inc()
	}
}
