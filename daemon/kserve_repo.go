package daemon

import (
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
	name := mux.Vars(r)["model"]
	m, err := n.catalog.load(r.Context(), name)
	switch {
	case errors.Is(err, repository.ErrNotFound):
		writeError(w, http.StatusNotFound, "load "+name+": the repository has no such model")
		return
	case errors.Is(err, repository.ErrInvalidModel):
		writeError(w, http.StatusBadRequest, err.Error())
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	n.events.add(EventModelLoad, store.SeverityInfo, "model loaded from the repository", map[string]string{"model": m.Name})
	if err := n.replan(r.Context(), "model "+m.Name+" loaded", n.planRates()); err != nil {
		writeError(w, http.StatusServiceUnavailable, "model "+m.Name+" loaded but not placed: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"name": m.Name, "state": "READY"})
}

// handleRepoUnload stops serving a model and re-plans without it.
func (n *node) handleRepoUnload(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["model"]
	if err := n.catalog.unload(name); err != nil {
		writeError(w, http.StatusNotFound, err.Error())
		return
	}
	n.events.add(EventModelUnload, store.SeverityInfo, "model unloaded", map[string]string{"model": name})
	if err := n.replan(r.Context(), "model "+name+" unloaded", n.planRates()); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"name": name, "state": "UNAVAILABLE"})
}
