package daemon

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/gorilla/mux"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/gpulet"
)

// A dry run of a model load: POST /api/v1/models/{model}/check, which
// `gpuletd models load M --dry-run` asks.
//
// An operator who changed a model's folder (a tighter SLO, a new version,
// a retrained file) wants to know before loading it whether the load goes
// through and what it does to the node, as a web server's configuration is
// tested before a reload. The check reads the folder, or the files the
// request carries, as the load would, checks it as the load does
// (replacementCheck), and plans the node with it in place of what serves,
// at the rates the next re-plan would use, beside a plan of the node as it
// is at those rates. It changes nothing: no model, plan, event, profile
// loan or repository entry.

// Verdicts of a load check: what a load now would do.
const (
	// checkServes: the load goes through and the plan places every
	// version.
	checkServes = "serves"
	// checkMeasuredFirst: the load goes through; a version has no latency
	// profile yet, and is measured beside the serving gpu-lets before it
	// is placed (or refused then).
	checkMeasuredFirst = "measured_first"
	// checkUnplaced: the load goes through, but the plan places a version
	// on no gpu-let (its reason says why).
	checkUnplaced = "unplaced"
	// checkRefused: the load fails, with the status and error it would
	// answer; a model that serves serves on as it was.
	checkRefused = "refused"
	// checkPipeline: the load goes through; a pipeline whose steps serve,
	// whose plan is made from theirs when it is loaded.
	checkPipeline = "pipeline"
	// checkStepsNotServed: the load of a pipeline goes through, but a step
	// of it does not serve (Reason), so neither would the pipeline.
	checkStepsNotServed = "steps_not_served"
)

// Where a checked version's latency profile comes from
// (loadCheckVersion.Profile).
const (
	profileOwn  = "own"  // measured for this file (or the emulated device's set)
	profileLent = "lent" // the file it replaces, until this one is measured (lendProfile)
	profileNone = "none" // none: measured first
)

// loadCheckDoc answers a load check.
type loadCheckDoc struct {
	Name    string `json:"name"`
	Verdict string `json:"verdict"`
	// Status and Error are the load's answer when it would be refused.
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// ServesNow says that the model serves now.
	ServesNow bool `json:"serves_now"`
	// Reason says why a pipeline would not serve (checkStepsNotServed).
	Reason string `json:"reason,omitempty"`
	// Versions are the versions the load would serve, newest first.
	Versions []loadCheckVersion `json:"versions,omitempty"`
	// Changes say in words what the load changes of what serves.
	Changes []string `json:"changes,omitempty"`
	// Displaced are the other models of which the plan with the load
	// leaves more of their rate without a gpu-let than the plan without
	// it, and why.
	Displaced map[string]string `json:"displaced,omitempty"`
}

// loadCheckVersion is one version a checked load would serve.
type loadCheckVersion struct {
	Name         string  `json:"name"`
	Version      int     `json:"version"`
	SLOMS        float64 `json:"slo_ms"`
	SLOFrom      string  `json:"slo_from,omitempty"`
	MaxBatchSize int     `json:"max_batch_size"`
	SHA256       string  `json:"sha256,omitempty"`
	// Profile is where the plan's latency profile comes from (profileOwn,
	// profileLent or profileNone); Unprofiled why it has none.
	Profile    string `json:"profile"`
	Unprofiled string `json:"unprofiled,omitempty"`
	// Note says how a lent profile is used.
	Note string `json:"note,omitempty"`
	// PlacedOn are the gpu-lets the plan puts the version on, each as its
	// device and size ("cpu 50%", "gpu0 43% 3g.40gb").
	PlacedOn []string `json:"placed_on,omitempty"`
	// Rate is the rate it is planned for, requests/s (0: no traffic yet);
	// Unscheduled what of it (with the plan's headroom) no gpu-let takes,
	// and Reason why.
	Rate        float64 `json:"rate"`
	Unscheduled float64 `json:"unscheduled_rate,omitempty"`
	Reason      string  `json:"reason,omitempty"`
}

// handleAdminLoadCheck answers what a load of the model, with the same
// request body (Triton's config and file overrides), would do now, and
// changes nothing.
func (n *node) handleAdminLoadCheck(w http.ResponseWriter, r *http.Request) {
	lr, ierr := n.readLoadRequest(r)
	if ierr != nil {
		writeInferError(w, ierr)
		return
	}
	name := mux.Vars(r)["model"]
	n.answerPlannerRun(w, r, "load check", func(ctx context.Context) (any, error) { return n.checkLoad(ctx, name, lr) })
}

// checkLoad says what loadModel(name, lr) would do now, doing none of it.
func (n *node) checkLoad(ctx context.Context, name string, lr loadRequest) (loadCheckDoc, error) {
	old, served := n.catalog.get(name)
	doc := loadCheckDoc{Name: name, ServesNow: served && n.modelReady(name)}
	refused := func(ierr *inferError) (loadCheckDoc, error) {
		doc.Verdict, doc.Status, doc.Error = checkRefused, ierr.code, ierr.msg
		return doc, nil
	}
	if ierr := lr.check(); ierr != nil {
		return refused(ierr)
	}
	root, ierr := n.writeUpload(name, lr)
	if ierr != nil {
		return refused(ierr)
	}
	defer n.uploads.drop(root)
	ms, err := n.catalog.read(name, lr.config, root)
	if check := n.replacementCheck(ctx, name); err == nil && check != nil {
		err = check(ms)
	}
	if err != nil {
		ierr := n.loadRefusal(name, root, err)
		ierr.msg += n.servesOnNote(name, served, err)
		return refused(ierr)
	}
	doc.Changes = loadChanges(n.catalog.family(name), ms)
	if ms[0].Config.Ensemble != nil {
		doc.Verdict, doc.Reason = checkPipeline, n.stepsNotServed(ms[0])
		if doc.Reason != "" {
			doc.Verdict = checkStepsNotServed
		}
		return doc, nil
	}
	// What the plan is given: a new file of the served model is placed
	// with its predecessor's profile where the load would lend it
	// (lendProfile); planned under the old file's sha256, it takes that
	// profile on every device type, which differs only where the new file
	// has a profile of its own on one type and not another.
	planned := slices.Clone(ms)
	if len(n.lendDevices(ctx, old, ms[0])) > 0 {
		lent := *ms[0]
		lent.SHA256 = old.SHA256
		planned[0] = &lent
	}
	_, rates := n.planPipelines(ctx, n.planRates())
	all := n.catalog.all()
	before, _, err := n.planOf(ctx, all, rates)
	if err != nil {
		return doc, err
	}
	others := slices.DeleteFunc(slices.Clone(all), func(m *repository.Model) bool { return m.Family == name })
	after, missing, err := n.planOf(ctx, append(others, planned...), rates)
	if err != nil {
		return doc, err
	}
	doc.Verdict = checkServes
	for i, m := range ms {
		v := loadCheckVersion{Name: m.Name, Version: m.Version, SLOMS: float64(m.Config.SLO.D().Microseconds()) / 1000,
			SLOFrom: m.SLOSource, MaxBatchSize: m.Config.MaxBatchSize, SHA256: m.SHA256, Profile: profileOwn,
			PlacedOn: placedOn(after, m.Name), Rate: rates[m.Name], Unscheduled: after.Unscheduled[m.Name], Reason: after.Reasons[m.Name]}
		why, unprofiled := missing[m.Name]
		switch {
		case unprofiled:
			v.Profile, v.Unprofiled = profileNone, why
			if doc.Verdict == checkServes {
				doc.Verdict = checkMeasuredFirst
			}
		case planned[i] != m:
			v.Profile = profileLent
			v.Note = fmt.Sprintf("placed with the profile of the file it replaces (sha256 %.12s) until its own is measured", old.SHA256)
		}
		if !unprofiled && len(v.PlacedOn) == 0 {
			doc.Verdict = checkUnplaced
		}
		doc.Versions = append(doc.Versions, v)
	}
	doc.Displaced = displaced(before, after, others)
	return doc, nil
}

// stepsNotServed says why the pipeline p, as read, would not serve: a step
// that is not a served model, or one that does not serve now; "" when every
// step serves.
func (n *node) stepsNotServed(p *repository.Model) string {
	steps, err := n.catalog.steps(p)
	if err != nil {
		return err.Error()
	}
	for _, s := range steps {
		if !n.modelReady(s.Name) {
			return fmt.Sprintf("its step %s does not serve: %s", s.Name, n.notReadyReason(s.Name))
		}
	}
	return ""
}

// planOf plans the models ms for rates as a re-plan would, changing
// nothing; it returns the models left out for want of a profile, and why.
func (n *node) planOf(ctx context.Context, ms []*repository.Model, rates map[string]float64) (*gpulet.Plan, map[string]string, error) {
	in, missing := n.planInputOf(ctx, ms, rates)
	p, err := n.plan(ctx, in, n.algorithm())
	return p, missing, err
}

// placedOn names the gpu-lets of plan that name is placed on: device and
// size.
func placedOn(plan *gpulet.Plan, name string) []string {
	var out []string
	for _, g := range plan.GPUs {
		for _, l := range g.GPULets {
			if slices.ContainsFunc(l.Models, func(p gpulet.Placement) bool { return p.Name == name }) {
				out = append(out, g.ID+" "+l.SizeWords())
			}
		}
	}
	return out
}

// displaced says, for each of the models others, more of whose rate the
// plan after leaves without a gpu-let than the plan before, how much and
// why.
func displaced(before, after *gpulet.Plan, others []*repository.Model) map[string]string {
	out := map[string]string{}
	for _, m := range others {
		was, is := before.Unscheduled[m.Name], after.Unscheduled[m.Name]
		if is <= was*(1+1e-6)+1e-9 {
			continue
		}
		why := after.Reasons[m.Name] // it gives the rate left over
		if why == "" {
			why = fmt.Sprintf("%.3g req/s of its planned rate would have no gpu-let", is)
		}
		if was > 0 {
			why += fmt.Sprintf(" (%.3g without this load)", was)
		}
		out[m.Name] = why
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
