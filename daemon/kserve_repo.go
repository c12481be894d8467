package daemon

import (
	"context"
	"errors"
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
// it is placed.
func (n *node) handleRepoLoad(w http.ResponseWriter, r *http.Request) {
	m, ierr := n.loadModel(r.Context(), mux.Vars(r)["model"])
	if ierr != nil {
		writeError(w, ierr.code, ierr.msg)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"name": m.Name, "state": "READY"})
}

// loadModel (re)loads a model from the repository and re-plans so that it is
// placed, whichever protocol asks.
func (n *node) loadModel(ctx context.Context, name string) (*repository.Model, *inferError) {
	m, err := n.catalog.load(ctx, name)
	switch {
	case errors.Is(err, repository.ErrNotFound):
		return nil, &inferError{code: http.StatusNotFound, reason: "unknown_model", msg: "load " + name + ": the repository has no such model"}
	case errors.Is(err, repository.ErrInvalidModel):
		return nil, badRequest("%v", err)
	case err != nil:
		return nil, &inferError{code: http.StatusInternalServerError, reason: "internal", msg: err.Error()}
	}
	n.events.add(EventModelLoad, store.SeverityInfo, "model loaded from the repository", map[string]string{"model": m.Name})
	if err := n.replan(ctx, "model "+m.Name+" loaded", n.planRates()); err != nil {
		return nil, &inferError{code: http.StatusServiceUnavailable, reason: "unplaced", msg: "model " + m.Name + " loaded but not placed: " + err.Error()}
	}
	return m, nil
}

// handleRepoUnload stops serving a model and re-plans without it.
func (n *node) handleRepoUnload(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["model"]
	if ierr := n.unloadModel(r.Context(), name); ierr != nil {
		writeError(w, ierr.code, ierr.msg)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"name": name, "state": "UNAVAILABLE"})
}

// unloadModel stops serving a model and re-plans without it.
func (n *node) unloadModel(ctx context.Context, name string) *inferError {
	if err := n.catalog.unload(name); err != nil {
		return &inferError{code: http.StatusNotFound, reason: "unknown_model", msg: err.Error()}
	}
	n.events.add(EventModelUnload, store.SeverityInfo, "model unloaded", map[string]string{"model": name})
	if err := n.replan(ctx, "model "+name+" unloaded", n.planRates()); err != nil {
		return &inferError{code: http.StatusInternalServerError, reason: "internal", msg: err.Error()}
	}
	return nil
}
