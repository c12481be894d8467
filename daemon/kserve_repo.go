package daemon

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gorilla/mux"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// handleRepoIndex lists the repository's entries; the body may ask, as
// Triton's index request does, for those ready only: {"ready": true}.
func (n *node) handleRepoIndex(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Ready bool `json:"ready"`
	}
	if _, err := readJSONBody(r, maxParamsBody, &req); err != nil {
		writeInferError(w, badRequest("index request: %v", err))
		return
	}
	entries, err := n.catalog.indexEntries(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := []repoEntry{}
	for _, e := range entries {
		if !req.Ready || e.State == "READY" {
			out = append(out, e)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleRepoLoad (re)loads a model from the repository and re-plans so that
// it is placed. The body may carry Triton's configuration override,
// {"parameters": {"config": "<ModelConfig as JSON>"}}, and its file
// overrides, "file:<version>/<file>": "<base64>".
func (n *node) handleRepoLoad(w http.ResponseWriter, r *http.Request) {
	lr, ierr := n.readLoadRequest(r)
	if ierr != nil {
		writeInferError(w, ierr)
		return
	}
	res, ierr := n.loadModel(r.Context(), mux.Vars(r)["model"], lr)
	if ierr != nil {
		writeInferError(w, ierr)
		return
	}
	writeJSON(w, http.StatusOK, loadAnswerDoc{Name: res.model.Name, State: "READY", Changes: res.changes, Displaced: res.displaced})
}

// loadAnswerDoc answers a load that serves its model.
type loadAnswerDoc struct {
	Name  string `json:"name"`
	State string `json:"state"`
	// Changes say in words what the load changed of what served
	// (loadChanges): none for a model that did not serve.
	Changes []string `json:"changes,omitempty"`
	// Displaced are the models and pipelines that served before the load
	// and no longer do in the plan made with it, and why.
	Displaced map[string]string `json:"displaced,omitempty"`
}

// loadResult is what a load that went through did.
type loadResult struct {
	model *repository.Model
	// changes: what it changed of the versions served before
	// (loadChanges).
	changes []string
	// displaced: the models and pipelines that served before the load and
	// do not after the re-plan it caused, and why (displacedBy).
	displaced map[string]string
}

// loadRequest is what a repository load request asks beyond the model's
// name, over either protocol.
type loadRequest struct {
	// config is Triton's ModelConfig as JSON; it replaces the folder's
	// configuration files.
	config []byte
	// files are file overrides by path in the model folder (checked by
	// uploadPath): the folder then comes from them, not the repository.
	files map[string][]byte
}

// addParameter takes one of a load request's parameters: config as text,
// a file override as its bytes.
func (lr *loadRequest) addParameter(key string, text string, data []byte) *inferError {
	if key == "config" {
		lr.config = []byte(text)
		return nil
	}
	p, ok := strings.CutPrefix(key, uploadPrefix)
	if !ok {
		return badRequest("load request: parameter %q is not supported; gpuletd reads config (the model's configuration as JSON) and %s<version>/<file> (a file of the model folder)", key, uploadPrefix)
	}
	p, err := uploadPath(p)
	if err != nil {
		return badRequest("load request: %v", err)
	}
	if len(data) == 0 {
		return badRequest("load request: file override %q is empty (over gRPC a file's bytes go in bytes_param)", key)
	}
	if lr.files == nil {
		lr.files = map[string][]byte{}
	}
	lr.files[p] = data
	return nil
}

// check refuses file overrides without the configuration: Triton asks for
// both, since the files replace the whole folder.
func (lr *loadRequest) check() *inferError {
	if len(lr.files) > 0 && len(lr.config) == 0 {
		return badRequest("load request: file overrides replace the whole model folder, so the model's configuration must come with them in the config parameter")
	}
	return nil
}

// loadModel (re)loads a model from the repository, or from the files the
// request carries, and re-plans so that it is placed, whichever protocol
// asks. A load that fails leaves the model as it was.
func (n *node) loadModel(ctx context.Context, name string, lr loadRequest) (loadResult, *inferError) {
	if ierr := lr.check(); ierr != nil {
		return loadResult{}, ierr
	}
	root, ierr := n.writeUpload(name, lr)
	if ierr != nil {
		return loadResult{}, ierr
	}
	old, served := n.catalog.get(name)
	family := n.catalog.family(name)
	m, replaced, err := n.catalog.load(ctx, name, lr.config, root, n.replacementCheck(ctx, name))
	if err != nil {
		n.uploads.drop(root)
		ierr := n.loadRefusal(name, root, err)
		if !errors.Is(err, repository.ErrNotFound) {
			n.loadFailed(name, ierr, errors.Is(err, repository.ErrInvalidModel) && root == "" && len(lr.config) == 0, served)
			ierr.msg += n.servesOnNote(name, served, err) // the event and the model's warning say so their way
		}
		return loadResult{}, ierr
	}
	if replaced != root {
		n.uploads.drop(replaced)
	}
	n.stale.clear(name)
	n.clearUnserved(name) // what kept the load before from serving: this one is placed or profiled anew
	n.noteLoaded(name)
	msg := "model loaded from the repository"
	if root != "" {
		msg = fmt.Sprintf("model loaded from %d uploaded files", len(lr.files))
	}
	changes := loadChanges(family, n.catalog.family(name))
	if len(changes) > 0 {
		msg += "; " + strings.Join(changes, "; ")
	}
	n.events.add(EventModelLoad, store.SeverityInfo, msg, map[string]string{"model": m.Name})
	if m.Config.Ensemble == nil {
		n.lendProfile(ctx, old, m) // a new file of a served model: placed at once, measured later
		n.profileLater(ctx, m)     // no profile, or one that never finished: measured beside the serving gpu-lets, then placed
	}
	servedBefore := n.servedBesides(name)
	replanErr := n.replan(ctx, "model "+m.Name+" loaded", n.planRates())
	displaced := n.displacedBy(name, servedBefore)
	if ierr := n.loadAnswer(m.Name, replanErr); ierr != nil {
		if n.modelState(m.Name, n.router.models()) == stateUnservable {
			n.loadFailed(m.Name, ierr, false, false) // not on its way: it failed
		}
		return loadResult{}, ierr
	}
	n.loadNesting(ctx, m)
	return loadResult{model: m, changes: changes, displaced: displaced}, nil
}

// servedBesides lists the models and pipelines that serve now, but for
// those of the model folder name.
func (n *node) servedBesides(name string) []string {
	var out []string
	for _, m := range n.catalog.all() {
		if m.Family != name && n.modelReady(m.Name) {
			out = append(out, m.Name)
		}
	}
	for _, p := range n.catalog.allPipelines() {
		if p.Name != name && n.modelReady(p.Name) {
			out = append(out, p.Name)
		}
	}
	return out
}

// displacedBy says which of before, the models and pipelines that served
// before the load of name, no longer serve after the re-plan it caused, and
// why (unservable: not those on their way to a gpu-let); a warning event
// names them, since a load's answer is about its own model. nil when none.
func (n *node) displacedBy(name string, before []string) map[string]string {
	out := map[string]string{}
	routed := n.router.models()
	for _, b := range before {
		if n.modelState(b, routed) == stateUnservable { // not one on its way back to a gpu-let
			out[b] = n.notReadyReason(b)
		}
	}
	if len(out) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(out))
	n.events.add(EventModelLoad, store.SeverityWarning,
		fmt.Sprintf("loading %s took the gpu-lets of %s: the plan made with it no longer serves them (gpuletd models show NAME says why)", name, strings.Join(names, ", ")),
		map[string]string{"model": name})
	return out
}

// writeUpload writes the files a load request of name carries into a
// folder tree of their own and returns its root: "" when it carries none.
func (n *node) writeUpload(name string, lr loadRequest) (string, *inferError) {
	if len(lr.files) == 0 {
		return "", nil
	}
	if !repository.ValidName(name) {
		return "", badRequest("load %q: the name is not allowed for a model folder; use letters, digits, '.', '_' and '-'", name)
	}
	if n.uploads == nil {
		return "", &inferError{code: http.StatusInternalServerError, reason: reasonInternal, msg: "load " + name + ": this daemon keeps no uploaded files"}
	}
	root, err := n.uploads.write(name, lr.files)
	if err != nil {
		return "", &inferError{code: http.StatusInternalServerError, reason: reasonInternal, msg: "load " + name + ": " + err.Error()}
	}
	return root, nil
}

// loadRefusal is the answer to a load of name whose folder (or the files
// under root, "" for none) failed to read or check with err.
func (n *node) loadRefusal(name, root string, err error) *inferError {
	switch {
	case errors.Is(err, repository.ErrNotFound):
		return &inferError{code: http.StatusNotFound, reason: reasonUnknownModel, msg: "load " + name + ": the repository has no such model" + n.catalog.roots.DidYouMean(name)}
	case errors.Is(err, repository.ErrInvalidModel):
		return badRequest("%s", uploadedPaths(err.Error(), root, name))
	}
	return &inferError{code: http.StatusInternalServerError, reason: reasonInternal, msg: uploadedPaths(err.Error(), root, name)}
}

// servesOnNote ends the answer to a load of name refused with err: that
// the model keeps serving, when it was served before the load (served)
// and still is, and err says the new files cannot serve.
func (n *node) servesOnNote(name string, served bool, err error) string {
	if !served || !errors.Is(err, repository.ErrInvalidModel) || !n.modelReady(name) {
		return ""
	}
	return "; " + name + " serves on as it was loaded before"
}

// loadAnswer is a load's answer once the re-plan it caused returned
// replanErr. Triton answers a load once the model is ready, or fails it: a
// model the plan left out (no latency profile yet, no room) is not READY,
// nor one placed whose requests cannot fit the request limit. A re-plan
// that failed only for other models (a gpu-let of theirs that did not
// start) fails no load of a model that serves: their status says why.
func (n *node) loadAnswer(name string, replanErr error) *inferError {
	if why := n.limitRefusal(name); why != "" && n.readyIn(name, n.router.models()) {
		// 409, not 503: no wait makes it ready, a larger limit does.
		return &inferError{code: http.StatusConflict, reason: reasonUnservable, msg: "model " + name + " loaded and placed but not ready: " + why}
	}
	if n.modelReady(name) {
		return nil
	}
	if replanErr != nil && n.notServedReason(name) == "" {
		// Nothing names this model: the re-plan's own failure is its reason.
		return &inferError{code: http.StatusServiceUnavailable, reason: reasonUnplaced, msg: "model " + name + " loaded but not placed: " + replanErr.Error()}
	}
	return &inferError{code: http.StatusServiceUnavailable, reason: reasonUnplaced, msg: "model " + name + " loaded but not served: " + n.notReadyReason(name)}
}

// uploadedPaths names the files of an upload in msg by their paths in the
// request rather than where the daemon wrote them; root "" is no upload.
func uploadedPaths(msg, root, name string) string {
	if root == "" {
		return msg
	}
	dir := filepath.Join(root, name)
	msg = strings.ReplaceAll(msg, dir+string(filepath.Separator), "uploaded ")
	return strings.ReplaceAll(msg, dir, "the uploaded folder")
}

// readLoadRequest reads a REST load request's body: empty, or parameters,
// of which gpuletd reads config (Triton's ModelConfig as a JSON string) and
// file overrides (base64 strings). A body with files may be as large as
// limits.max_request_body.
func (n *node) readLoadRequest(r *http.Request) (loadRequest, *inferError) {
	limit := int64(n.conf().Limits.MaxRequestBody)
	var req struct {
		Parameters map[string]json.RawMessage `json:"parameters"`
	}
	_, err := readJSONBody(r, limit, &req)
	switch {
	case errors.Is(err, errBodyTooLarge):
		return loadRequest{}, &inferError{code: http.StatusRequestEntityTooLarge, reason: reasonTooLarge,
			msg: fmt.Sprintf("load request: body above %d bytes (limits.max_request_body)", limit)}
	case err != nil:
		return loadRequest{}, badRequest("load request: %v", err)
	}
	var lr loadRequest
	for k, v := range req.Parameters {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return loadRequest{}, badRequest("load request: parameter %q must be a string: the model's configuration as JSON for config, the file's bytes in base64 for a file", k)
		}
		var data []byte
		if strings.HasPrefix(k, uploadPrefix) {
			if data, err = base64.StdEncoding.DecodeString(s); err != nil {
				return loadRequest{}, badRequest("load request: parameter %q is not base64: %v", k, err)
			}
		}
		if ierr := lr.addParameter(k, s, data); ierr != nil {
			return loadRequest{}, ierr
		}
	}
	return lr, nil
}

// handleRepoUnload stops serving a model and re-plans without it. The body
// may carry Triton's {"parameters": {"unload_dependents": true}}: a
// pipeline's step models are unloaded with it.
func (n *node) handleRepoUnload(w http.ResponseWriter, r *http.Request) {
	dependents, ierr := readUnloadRequest(r)
	if ierr != nil {
		writeInferError(w, ierr)
		return
	}
	name := mux.Vars(r)["model"]
	if ierr := n.unloadModel(r.Context(), name, dependents); ierr != nil {
		writeInferError(w, ierr)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"name": name, "state": "UNAVAILABLE"})
}

// paramUnloadDependents is the unload parameter that also unloads a
// pipeline's step models (Triton's model_repository(unload_dependents)).
const paramUnloadDependents = "unload_dependents"

// readUnloadRequest reads a REST unload request's body: empty, or
// parameters of which gpuletd reads unload_dependents.
func readUnloadRequest(r *http.Request) (dependents bool, ierr *inferError) {
	var req struct {
		Parameters map[string]json.RawMessage `json:"parameters"`
	}
	if _, err := readJSONBody(r, maxParamsBody, &req); err != nil {
		return false, badRequest("unload request: %v", err)
	}
	for k, v := range req.Parameters {
		if k != paramUnloadDependents {
			return false, badRequest("unload request: parameter %q is not supported; gpuletd reads %s", k, paramUnloadDependents)
		}
		if err := json.Unmarshal(v, &dependents); err != nil {
			return false, badRequest("unload request: %s must be true or false", paramUnloadDependents)
		}
	}
	return dependents, nil
}

// unloadModel stops serving a model, and with dependents a pipeline's step
// models too (those of the pipelines its steps run included, and those
// pipelines), and re-plans without them.
func (n *node) unloadModel(ctx context.Context, name string, dependents bool) *inferError {
	var steps []string
	if p, ok := n.catalog.pipeline(name); ok && dependents {
		for _, s := range p.Config.Ensemble.Steps {
			steps = append(steps, s.Model)
		}
		steps = append(steps, p.Config.Ensemble.Inlined...)
	}
	uploaded, err := n.catalog.unload(name)
	if err != nil {
		return &inferError{code: http.StatusNotFound, reason: reasonUnknownModel, msg: err.Error() + n.catalog.didYouMean(name)}
	}
	n.uploads.drop(uploaded)
	n.stale.clear(name)
	n.seqs.forget(name)
	n.events.add(EventModelUnload, store.SeverityInfo, "model unloaded", map[string]string{"model": name})
	for _, step := range slices.Compact(slices.Sorted(slices.Values(steps))) {
		uploaded, err := n.catalog.unload(step)
		if err != nil {
			continue // not served (already unloaded, or never loaded)
		}
		n.uploads.drop(uploaded)
		n.events.add(EventModelUnload, store.SeverityInfo, "model unloaded with its pipeline "+name, map[string]string{"model": step})
	}
	n.forgetUnserved()
	if err := n.replan(ctx, "model "+name+" unloaded", n.planRates()); err != nil {
		// The model is unloaded; what the re-plan failed to do concerns
		// the models left, whose status says why they are not served.
		n.log.Warn("re-plan after an unload failed", zap.String("model", name), zap.Error(err))
	}
	return nil
}

// namedRepositoryRefusal is the answer to a repository call that names
// the repository name in field (REST's path, gRPC's repository_name).
func namedRepositoryRefusal(field, name string) *inferError {
	return badRequest("%s %q: naming a repository is not supported; gpuletd serves its model repositories (model_repository, extra_model_repositories) as one: leave it out, as Triton asks", field, name)
}

// handleNamedRepository answers REST's repository calls that name a
// repository (POST /v2/repository/{repository}/index, …/models/{model}/load
// and unload) with the refusal gRPC gives.
func handleNamedRepository(w http.ResponseWriter, r *http.Request) {
	writeInferError(w, namedRepositoryRefusal("repository", mux.Vars(r)["repository"]))
}
