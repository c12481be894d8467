package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/gorilla/mux"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/profiler/store"
)

func (n *node) handleRepoIndex(w http.ResponseWriter, r *http.Request) {
	entries, err := n.catalog.indexEntries(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if entries == nil {
		entries = []repoEntry{}
	}
	writeJSON(w, http.StatusOK, entries)
}

// handleRepoLoad (re)loads a model from the repository and re-plans so that
// it is placed. The body may carry Triton's configuration override,
// {"parameters": {"config": "<ModelConfig as JSON>"}}.
func (n *node) handleRepoLoad(w http.ResponseWriter, r *http.Request) {
	override, ierr := loadOverride(r)
	if ierr != nil {
		writeInferError(w, ierr)
		return
	}
	m, ierr := n.loadModel(r.Context(), mux.Vars(r)["model"], override)
	if ierr != nil {
		writeInferError(w, ierr)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"name": m.Name, "state": "READY"})
}

// loadModel (re)loads a model from the repository and re-plans so that it is
// placed, whichever protocol asks.
func (n *node) loadModel(ctx context.Context, name string, override []byte) (*repository.Model, *inferError) {
	old, _ := n.catalog.get(name)
	m, err := n.catalog.load(ctx, name, override)
	switch {
	case errors.Is(err, repository.ErrNotFound):
		return nil, &inferError{code: http.StatusNotFound, reason: reasonUnknownModel, msg: "load " + name + ": the repository has no such model"}
	case errors.Is(err, repository.ErrInvalidModel):
		return nil, badRequest("%v", err)
	case err != nil:
		return nil, &inferError{code: http.StatusInternalServerError, reason: reasonInternal, msg: err.Error()}
	}
	n.noteLoaded(name)
	n.events.add(EventModelLoad, store.SeverityInfo, "model loaded from the repository", map[string]string{"model": m.Name})
	if m.Config.Ensemble == nil {
		n.lendProfile(ctx, old, m) // a new file of a served model: placed at once, measured later
		n.profileLater(ctx, m)     // no profile at all: measured beside the serving gpu-lets, then placed
	}
	if err := n.replan(ctx, "model "+m.Name+" loaded", n.planRates()); err != nil {
		return nil, &inferError{code: http.StatusServiceUnavailable, reason: reasonUnplaced, msg: "model " + m.Name + " loaded but not placed: " + err.Error()}
	}
	// Triton answers a load once the model is ready, or fails it: a model
	// the plan left out (no latency profile yet, no room) is not READY.
	if !n.modelReady(m.Name) {
		return nil, &inferError{code: http.StatusServiceUnavailable, reason: reasonUnplaced, msg: "model " + m.Name + " loaded but not served: " + n.notReadyReason(m.Name)}
	}
	return m, nil
}

// maxLoadBody bounds a load request's body (a model configuration).
const maxLoadBody = 1 << 20

// loadOverride reads a REST load request's body: empty, or parameters of
// which gpuletd reads config (Triton's ModelConfig as a JSON string).
func loadOverride(r *http.Request) ([]byte, *inferError) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxLoadBody+1))
	switch {
	case err != nil:
		return nil, badRequest("read load request: %v", err)
	case len(body) > maxLoadBody:
		return nil, &inferError{code: http.StatusRequestEntityTooLarge, reason: reasonTooLarge, msg: fmt.Sprintf("load request: body above %d bytes", maxLoadBody)}
	case len(bytes.TrimSpace(body)) == 0:
		return nil, nil
	}
	var req struct {
		Parameters map[string]json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("load request: not JSON: %v", err)
	}
	var override []byte
	for k, v := range req.Parameters {
		if ierr := checkLoadParameter(k); ierr != nil {
			return nil, ierr
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, badRequest("load request: parameter config must be a string holding the model configuration as JSON")
		}
		override = []byte(s)
	}
	return override, nil
}

// checkLoadParameter refuses a load request's parameter other than config,
// over either protocol.
func checkLoadParameter(key string) *inferError {
	if key != "config" {
		return badRequest("load request: parameter %q is not supported; gpuletd reads config (the model's configuration as JSON)", key)
	}
	return nil
}

// handleRepoUnload stops serving a model and re-plans without it.
func (n *node) handleRepoUnload(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["model"]
	if ierr := n.unloadModel(r.Context(), name); ierr != nil {
		writeInferError(w, ierr)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"name": name, "state": "UNAVAILABLE"})
}

// unloadModel stops serving a model and re-plans without it.
func (n *node) unloadModel(ctx context.Context, name string) *inferError {
	if err := n.catalog.unload(name); err != nil {
		return &inferError{code: http.StatusNotFound, reason: reasonUnknownModel, msg: err.Error()}
	}
	n.events.add(EventModelUnload, store.SeverityInfo, "model unloaded", map[string]string{"model": name})
	if err := n.replan(ctx, "model "+name+" unloaded", n.planRates()); err != nil {
		return &inferError{code: http.StatusInternalServerError, reason: reasonInternal, msg: err.Error()}
	}
	return nil
}
