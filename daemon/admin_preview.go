package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/pipeline"
)

// previewDoc answers a plan preview: what a re-plan for the rates would
// apply, and what it would change of what runs.
type previewDoc struct {
	// Plan is the plan a re-plan would apply: the planner's, with the
	// headroom, laid out on the GPUs where it moves the least.
	Plan      *gpulet.Plan `json:"plan"`
	Algorithm gpulet.Algo  `json:"algorithm"`
	// Headroom is what a plan adds to every rate (0.2: 20%), and
	// HeadroomPlaced what this one gives the model it gives least (less
	// where all of it does not fit; negative where a model is placed short
	// of its rate). MinRate is the least rate a model is planned for,
	// requests/s.
	Headroom       float64 `json:"headroom"`
	HeadroomPlaced float64 `json:"headroom_placed"`
	MinRate        float64 `json:"min_rate"`
	// Rates are the rates planned for, every model's and pipeline's: the
	// node's estimates (0: none counted yet), with the request's over them.
	Rates map[string]float64 `json:"rates"`
	// Unprofiled are the models left out for want of a profile, and why.
	Unprofiled map[string]string `json:"unprofiled"`
	// Changes are what applying the plan would do to what runs, in the
	// order of the plan's diff (gpulet.PlanDiff.Actions), and Steps the
	// same in words, a line per step in the order the node takes them
	// (gpulet.PlanDiff.Steps); Unchanged says there is nothing to do.
	Changes   []gpulet.Change `json:"changes"`
	Steps     []string        `json:"steps"`
	Unchanged bool            `json:"unchanged"`
	// Crowded are the GPUs where what starts and loads would not fit
	// beside what runs (control.Crowded): it would wait for the old
	// gpu-lets to drain. Notes say so in words.
	Crowded []string `json:"crowded,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	// Capacity is how far the load of the rates may grow, in the same mix,
	// before the planner cannot place it all (as the status's is for the
	// estimates); nil for no load.
	Capacity *capacityStatus `json:"capacity,omitempty"`
	// Pipelines are the served pipelines' plans, or why one has none.
	Pipelines map[string]previewPipeline `json:"pipelines,omitempty"`
}

// previewPipeline is one pipeline's part of a preview.
type previewPipeline struct {
	Plan  *pipeline.Plan `json:"plan,omitempty"`
	Error string         `json:"error,omitempty"`
}

// handleAdminPreview plans for the rates given (over the current
// estimates) with the configured planner or the one asked for, as a
// re-plan would, and says what applying it would change; it applies
// nothing.
func (n *node) handleAdminPreview(w http.ResponseWriter, r *http.Request) {
	rates, algo, err := n.previewRequest(w, r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad preview request: "+err.Error())
		return
	}
	n.answerPlannerRun(w, r, "plan preview", func(ctx context.Context) (any, error) { return n.preview(ctx, rates, algo) })
}

// answerPlannerRun answers a request whose answer is a planner run, run(),
// that applies nothing: one at a time (the previews' gate, since some need
// no token) and for 30 s at most, with run's document or its error as
// "what: …".
func (n *node) answerPlannerRun(w http.ResponseWriter, r *http.Request, what string, run func(ctx context.Context) (any, error)) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if err := n.previews.enter(ctx); err != nil {
		writeError(w, http.StatusServiceUnavailable, what+": the plan previews and checks before it took too long: try again")
		return
	}
	defer n.previews.leave()
	doc, err := run(ctx)
	switch {
	case errors.Is(err, errNoHealthyDevice):
		writeError(w, http.StatusServiceUnavailable, err.Error())
	case ctx.Err() != nil:
		writeError(w, http.StatusServiceUnavailable, what+": "+ctx.Err().Error())
	case err != nil:
		writeError(w, http.StatusInternalServerError, what+": "+err.Error())
	default:
		writeJSON(w, http.StatusOK, doc)
	}
}

// previewRequest reads a preview's request: the rates to plan for (every
// model's and pipeline's estimate, with the request's over them) and the
// planner. A rate of no model or pipeline the node plans for, a negative
// one and an unknown planner are errors.
func (n *node) previewRequest(w http.ResponseWriter, r *http.Request) (map[string]float64, gpulet.Algo, error) {
	var body struct {
		Rates     map[string]float64 `json:"rates"`
		Algorithm string             `json:"algorithm"`
	}
	if r.ContentLength != 0 {
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil {
			return nil, "", err
		}
	}
	unknown, known := n.unknownModels(body.Rates)
	if len(unknown) > 0 {
		noun := "model"
		if len(unknown) > 1 {
			noun = "models"
		}
		planned := "none"
		if len(known) > 0 {
			planned = names(known, 20)
		}
		return nil, "", fmt.Errorf("rates: unknown %s %s: the node plans for %s", noun, names(unknown, 10), planned)
	}
	for name, rate := range body.Rates {
		if rate < 0 || rate > maxPreviewRate {
			return nil, "", fmt.Errorf("rates: %s: %v req/s: want a rate from 0 to %g", name, rate, float64(maxPreviewRate))
		}
	}
	algo := gpulet.Algo(body.Algorithm)
	if algo == "" {
		algo = n.algorithm()
	}
	if !slices.Contains(gpulet.Algos(), algo) {
		return nil, "", fmt.Errorf("algorithm %q: want one of %s", algo, strings.Join(gpulet.AlgoNames(), ", "))
	}
	rates := map[string]float64{}
	for _, name := range known {
		rates[name] = 0 // no request counted yet: planned at control.MinPlanRate
	}
	maps.Copy(rates, n.planRates())
	maps.Copy(rates, body.Rates)
	return rates, algo, nil
}

// preview plans for rates with algo as a re-plan would (propose) and
// says what applying the plan would change of what runs.
func (n *node) preview(ctx context.Context, rates map[string]float64, algo gpulet.Algo) (previewDoc, error) {
	p, err := n.propose(ctx, rates, algo)
	if err != nil {
		return previewDoc{}, err
	}
	placeable := control.Placeable(p.in, p.plan)
	diff := control.Changes(p.running, p.plan)
	doc := previewDoc{Plan: p.plan, Algorithm: algo, Headroom: control.Headroom, HeadroomPlaced: placedHeadroom(placeable, p.plan),
		MinRate: control.MinPlanRate, Rates: rates, Unprofiled: p.missing, Changes: diff.Actions(), Unchanged: diff.Unchanged()}
	doc.Steps = diff.Steps()
	// A gpu-let that lacks room on a device whose room can be shared
	// starts over the old ones (startsOver): only the others wait.
	inv := n.devices.Inventory()
	gpus := slices.DeleteFunc(slices.Clone(p.in.GPUs), func(g gpulet.GPU) bool {
		d, err := inv.Device(g.ID)
		return err == nil && startsOver(d)
	})
	doc.Crowded = control.Crowded(p.running, p.plan, gpus)
	for _, id := range doc.Crowded {
		doc.Notes = append(doc.Notes, fmt.Sprintf("on %s what starts and loads does not fit beside what runs there: it waits for the old gpu-lets to drain, and a model only they serve there goes unserved meanwhile", id))
	}
	if c, err := n.capacityOf(ctx, placeable, algo); err == nil {
		doc.Capacity = c
	}
	for _, pp := range p.pipelines {
		if doc.Pipelines == nil {
			doc.Pipelines = map[string]previewPipeline{}
		}
		if pp.err != nil {
			doc.Pipelines[pp.name] = previewPipeline{Error: pp.err.Error()}
			continue
		}
		doc.Pipelines[pp.name] = previewPipeline{Plan: &pp.plan}
	}
	return doc, nil
}

// placedHeadroom is the least, over in's models, of the rate plan assigns
// a model over the rate it was planned for (control.PlanRate without
// headroom), less one: the headroom the plan gives, to a tenth of a
// percent. A plan of no model gives control.Headroom.
func placedHeadroom(in gpulet.Input, plan *gpulet.Plan) float64 {
	assigned := plan.Assigned()
	least := control.Headroom
	for _, d := range in.Demands {
		least = min(least, assigned[d.Name]/control.PlanRate(d.Rate, 0)-1)
	}
	return math.Round(least*1000) / 1000
}

// maxPreviewRate bounds a rate a preview plans for, requests per second:
// far above what any node serves, and below where planning arithmetic
// loses its meaning.
const maxPreviewRate = 1e9

// unknownModels lists, quoted and sorted, the names of rates that are none
// of the models and pipelines the node plans for (known, sorted), so that a
// preview with a misspelt name is refused rather than planned without it.
func (n *node) unknownModels(rates map[string]float64) (unknown, known []string) {
	for _, m := range n.catalog.all() {
		known = append(known, m.Name)
	}
	for _, p := range n.catalog.allPipelines() {
		known = append(known, p.Name)
	}
	slices.Sort(known)
	for name := range rates {
		if !slices.Contains(known, name) {
			unknown = append(unknown, strconv.Quote(name))
		}
	}
	slices.Sort(unknown)
	return unknown, known
}
