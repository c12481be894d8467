package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/pipeline"
	"github.com/gpulet/gpuletd/profiler/store"
)

// TestPipelineMixFollowsShares: before a plan no step has variants (each
// runs its own model); after one, each step's variants are those with a
// share, which the status shows with their shares; a step whose model is
// not the plan's runs its own.
func TestPipelineMixFollowsShares(t *testing.T) {
	var pp pipelinePlans
	require.Empty(t, pp.variants("p", 0, "det"))
	pp.set("p", pipeline.Plan{Scaling: pipeline.AccuracyScaling, Accuracy: 0.9, Tasks: []pipeline.TaskPlan{
		{Task: "det", Variants: []pipeline.VariantPlan{{Variant: "det", Share: 1}}},
		{Task: "cls", Variants: []pipeline.VariantPlan{{Variant: "cls", Share: 0.75}, {Variant: "cls-lite", Share: 0.25}, {Variant: "cls-tiny", Share: 0}}},
	}})
	require.Equal(t, []string{"det"}, pp.variants("p", 0, "det"))
	require.Equal(t, []string{"cls", "cls-lite"}, pp.variants("p", 1, "cls"), "a variant without a share is not used")
	require.Empty(t, pp.variants("p", 2, "cls"))
	sc := pp.snapshot("p")
	require.Equal(t, pipeline.AccuracyScaling, sc.Scaling)
	require.Equal(t, [][]variantShare{{{"det", 1}}, {{"cls", 0.75}, {"cls-lite", 0.25}}}, sc.Mix)
	det, cls := &repository.Model{Name: "det"}, &repository.Model{Name: "cls"}
	require.Equal(t, sc, pp.snapshotOf("p", []*repository.Model{det, cls}))
	// Another pipeline is not affected.
	require.Empty(t, pp.variants("q", 1, "cls"))

	// The pipeline loaded again with another detector: until a plan of it,
	// its step runs its own model (the old plan's would fit the step and
	// run the detector no longer named), and the status shows no plan.
	require.Empty(t, pp.variants("p", 0, "crowd"))
	require.Equal(t, []string{"cls", "cls-lite"}, pp.variants("p", 1, "cls"))
	sc = pp.snapshotOf("p", []*repository.Model{{Name: "crowd"}, cls})
	require.Empty(t, sc.Scaling)
	require.Empty(t, sc.Mix)
	require.Empty(t, pp.snapshotOf("p", nil).Mix, "steps that cannot run")
}

// TestPipelineMeasures: the fan-out of a variant is the mean of the rows it
// wrote; the served accuracy starts at the first request's and then moves
// by the EWMA weight.
func TestPipelineMeasures(t *testing.T) {
	var pp pipelinePlans
	require.InDelta(t, 1, pp.fanoutOf("p", "det", 1), 0)
	pp.rows("p", "det", 4)
	pp.rows("p", "det", 2)
	require.InDelta(t, 3, pp.fanoutOf("p", "det", 1), 1e-12)
	require.InDelta(t, 7, pp.fanoutOf("p", "det-lite", 7), 0, "none written: the default")
	require.Zero(t, pp.fanoutRows("none"), "no request yet")
	pp.rows("p", "det-lite", 9)
	require.InDelta(t, 5, pp.fanoutRows("p"), 1e-12, "the pipeline's mean over its variants' rows")
	// The mean follows a change: after 3 windows of 4-row inputs, one of
	// 10 rows moves it most of the way (≈7.8), where the all-time mean
	// would be 5.5.
	for range 3 * fanoutWindow {
		pp.rows("q", "det", 4)
	}
	for range fanoutWindow {
		pp.rows("q", "det", 10)
	}
	require.InDelta(t, 7.8, pp.fanoutOf("q", "det", 1), 0.1)
	pp.served("p", 0.8)
	require.InDelta(t, 0.8, pp.snapshot("p").Accuracy, 1e-12)
	pp.served("p", 1)
	require.InDelta(t, 0.8+accuracyEWMA*0.2, pp.snapshot("p").Accuracy, 1e-12)
	pp.rerouted("p")
	pp.unplannedFor("p", "no healthy device")
	sc := pp.snapshot("p")
	require.Equal(t, int64(2), sc.Served)
	require.Equal(t, int64(1), sc.Rerouted)
	require.Equal(t, "no healthy device", sc.Unplanned)
	pp.set("p", pipeline.Plan{Scaling: pipeline.HardwareScaling})
	require.Empty(t, pp.snapshot("p").Unplanned, "a plan clears the reason")
}

// variantCatalog serves a two-step pipeline "p" (det → cls, 200 ms) and
// cls's variants: cls-lite (0.8) and cls-tiny (0.6) fit the step;
// cls-wrong declares itself a variant but gives another output; other is
// no variant.
func variantCatalog() (*catalog, *repository.Model) {
	spec := func(name string) []repository.TensorSpec {
		return []repository.TensorSpec{{Name: name, DataType: tensor.FP32, Dims: []int64{4}}}
	}
	model := func(name, of string, acc float64, in, out string) *repository.Model {
		return &repository.Model{Name: name, Family: name, Inputs: spec(in), Outputs: spec(out),
			Config: repository.ModelConfig{SLO: config.Duration(100 * time.Millisecond), MaxBatchSize: 8, VariantOf: of, Accuracy: acc}}
	}
	c := &catalog{models: map[string]*repository.Model{}, pipelines: map[string]*repository.Model{}}
	for _, m := range []*repository.Model{
		model("det", "", 0, "image", "objects"),
		model("cls", "", 0.95, "object", "labels"),
		model("cls-lite", "cls", 0.8, "object", "labels"),
		model("cls-tiny", "cls", 0.6, "object", "labels"),
		model("cls-wrong", "cls", 0.5, "object", "scores"),
		model("other", "", 0.3, "object", "labels"),
	} {
		c.models[m.Name] = m
	}
	c.models["det"].Outputs[0].Dims = []int64{3, 4} // three objects
	p := &repository.Model{Name: "p", Family: "p", Inputs: spec("image"),
		Outputs: []repository.TensorSpec{{Name: "labels", DataType: tensor.FP32, Dims: []int64{-1, 4}}},
		Config: repository.ModelConfig{SLO: config.Duration(200 * time.Millisecond), MinAccuracy: 0.5, MaxBatchSize: 1,
			PathAccuracy: map[string]float64{"det/cls-lite": 0.7}, Ensemble: &repository.Ensemble{
				Fanout: "objects", FanoutStep: 1,
				Steps: []repository.EnsembleStep{
					{Model: "det", Inputs: map[string]string{"image": "image"}, Outputs: map[string]string{"objects": "objects"}},
					{Model: "cls", At: 1, Inputs: map[string]string{"object": "objects"}, Outputs: map[string]string{"labels": "labels"}, Needs: []int{0}},
				}}}}
	c.pipelines[p.Name] = p
	return c, p
}

// TestVariantsOfStep: a step's variants are its model and the served models
// that name it and fit the step.
func TestVariantsOfStep(t *testing.T) {
	c, p := variantCatalog()
	step := p.Config.Ensemble.Steps[1]
	cls, _ := c.get("cls")
	var names []string
	for _, v := range c.variantsOf(step, cls) {
		names = append(names, v.Name)
	}
	require.Equal(t, []string{"cls", "cls-lite", "cls-tiny"}, names)
}

// linearProfile is a model whose batch of b takes base + per·b ms at every
// size, up to batch 16.
func linearProfile(t *testing.T, name string, base, per float64) *gpulet.Profile {
	var pts []gpulet.Point
	for _, size := range []int{50, 100} {
		for b := 1; b <= 16; b *= 2 {
			ms := base + per*float64(b)
			pts = append(pts, gpulet.Point{Batch: b, Size: size, P50MS: ms, P99MS: ms, Util: gpulet.UnknownUtil()})
		}
	}
	p, err := gpulet.NewProfile(name, "t", 100, pts)
	require.NoError(t, err)
	return p
}

// TestPipelinePlansAccuracyScaling plans the pipeline on 4 workers: a low
// rate runs every step at full accuracy; a rate beyond what full accuracy
// carries mixes in cls's cheaper variants, and their rates are raised to
// their shares of the step's load so that the gpu-let planner places them.
// A variant without a profile is no candidate.
func TestPipelinePlansAccuracyScaling(t *testing.T) {
	c, p := variantCatalog()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	n := &node{catalog: c, events: newEvents(st, zap.NewNop()), log: zap.NewNop()}
	n.pipes.rows("p", "det", 4) // every image has 4 objects
	profiles := map[string]*gpulet.Profile{
		"det":      linearProfile(t, "det", 4, 1),
		"cls":      linearProfile(t, "cls", 4, 2),
		"cls-lite": linearProfile(t, "cls-lite", 1, 0.5),
	}
	profile := func(m *repository.Model) (*gpulet.Profile, error) {
		if pr, ok := profiles[m.Name]; ok {
			return pr, nil
		}
		return nil, errors.New("not profiled")
	}
	spec, err := n.pipelineSpec(p, 50, profile)
	require.NoError(t, err)
	require.Len(t, spec.Tasks, 2)
	require.Len(t, spec.Tasks[1].Variants, 2, "cls-tiny has no profile")
	require.InDelta(t, 4, spec.Tasks[0].Variants[0].Fanout, 1e-12)
	require.InDelta(t, 0.5, spec.MinAccuracy, 0)
	require.Equal(t, p.Config.PathAccuracy, spec.PathAccuracy)

	low, err := planPipelineSpec(spec, 10, 0, 4)
	require.NoError(t, err)
	require.Equal(t, pipeline.HardwareScaling, low.Scaling)
	full := pipeline.MaxDemand(spec, pipeline.Options{Workers: 4, Utilization: 0.7, FullAccuracyOnly: true})
	high, err := planPipelineSpec(spec, full*1.2, 0, 4)
	require.NoError(t, err)
	require.Equal(t, pipeline.AccuracyScaling, high.Scaling)
	require.Less(t, high.Accuracy, low.Accuracy)

	n.installPipelinePlan("p", full*1.2, high)
	sc := n.pipes.snapshot("p")
	require.Equal(t, pipeline.AccuracyScaling, sc.Scaling)
	require.Len(t, sc.Mix[1], 2)
	cls, lite := high.Tasks[1].Variants[0], high.Tasks[1].Variants[1]
	require.Equal(t, "cls-lite", lite.Variant)

	// cls had 5000 req/s, 3000 of them from the pipeline's step; lite
	// only pipeline requests, more than its share (the door's last split).
	rates := pipelineRates(map[string]float64{"p": full * 1.2, "cls": 5000, "cls-lite": 900, "other": 7},
		map[string]float64{"cls": 3000, "cls-lite": 900}, []pipeline.Plan{high})
	require.InDelta(t, high.Tasks[1].Load*lite.Share/1.2, rates["cls-lite"], 1e-9, "the plan's share, not the measured one")
	require.InDelta(t, 2000+high.Tasks[1].Load*cls.Share/1.2, rates["cls"], 1e-9, "direct requests and the plan's share")
	require.InDelta(t, 7, rates["other"], 0)
	require.InDelta(t, full*1.2, rates["p"], 0)
	require.InDelta(t, high.Tasks[0].Load/1.2, rates["det"], 1e-9, "a step model without requests yet")
	evs, err := st.Events(context.Background(), 0, 10)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Contains(t, evs[0].Message, "pipeline p: accuracy scaling")
}

// TestPipelineWorkers: the workers are the first healthy device's smallest
// gpu-lets, as many as fit every healthy device.
func TestPipelineWorkers(t *testing.T) {
	for _, tc := range []struct {
		name          string
		devs          []mps.Device
		first         string
		workers, size int
	}{
		{"none", nil, "", 0, 100},
		{"one cpu", []mps.Device{{ID: "cpu", Backend: mps.BackendNone, Sizes: []int{100}, Health: mps.HealthOK}}, "cpu", 1, 100},
		{"two gpus, one failed", []mps.Device{
			{ID: "gpu0", Health: mps.HealthFailed, Sizes: []int{50, 100}},
			{ID: "gpu1", Health: mps.HealthOK, Sizes: []int{20, 40, 100}},
			{ID: "gpu2", Health: mps.HealthOK, Sizes: []int{20, 40, 100}},
		}, "gpu1", 10, 20},
	} {
		dev, workers, size := pipelineWorkers(tc.devs)
		if tc.first == "" {
			require.Nil(t, dev, tc.name)
		} else {
			require.Equal(t, tc.first, dev.ID, tc.name)
		}
		require.Equal(t, tc.workers, workers, tc.name)
		require.Equal(t, tc.size, size, tc.name)
	}
}

// TestPipelineRateIsNoSurge: a pipeline's own rate is taken out of the
// short rates the surge check compares with the plan (which assigns a
// pipeline nothing) and kept for the re-plan.
func TestPipelineRateIsNoSurge(t *testing.T) {
	c, _ := variantCatalog()
	n := &node{catalog: c}
	short := map[string]float64{"p": 80, "det": 80, "cls": 320}
	pipes := n.takePipelineRates(short)
	require.Equal(t, map[string]float64{"p": 80}, pipes)
	require.Equal(t, map[string]float64{"det": 80, "cls": 320}, short)
}

// TestDrainWait: a model's requests are due within its SLO, or within the
// SLO of a longer pipeline whose step may run it (its own model or a
// variant).
func TestDrainWait(t *testing.T) {
	c, _ := variantCatalog()
	for _, tc := range []struct {
		model string
		want  time.Duration
	}{
		{"det", 200 * time.Millisecond},
		{"cls", 200 * time.Millisecond},
		{"cls-lite", 200 * time.Millisecond},
		{"cls-wrong", 100 * time.Millisecond},
		{"other", 100 * time.Millisecond},
		{"gone", time.Second},
	} {
		require.Equal(t, tc.want, c.drainWait(tc.model), tc.model)
	}
}

// TestRequestAccuracy: a request's accuracy is the pipeline's table entry
// for the path its steps ran, else the product of the models' accuracies.
func TestRequestAccuracy(t *testing.T) {
	c, p := variantCatalog()
	r := &pipelineRun{p: p}
	get := func(names ...string) []*repository.Model {
		var out []*repository.Model
		for _, n := range names {
			m, ok := c.get(n)
			require.True(t, ok, n)
			out = append(out, m)
		}
		return out
	}
	require.InDelta(t, 0.95, r.accuracy(get("det"), get("cls")), 1e-12, "the product: det declares none (1), cls 0.95")
	require.InDelta(t, 0.7, r.accuracy(get("det", "cls-lite"), nil), 1e-12, "the table's entry, not 0.8")
	require.InDelta(t, 0.6, r.accuracy(get("det"), get("cls-tiny")), 1e-12)
	require.InDelta(t, 1, r.accuracy(get("det"), nil), 1e-12, "up to the fan-out")
}

// A model that runs two steps of a pipeline (one classifier on every
// object, twice) is planned for both: the pipeline was left unplanned
// before ("variant name used twice"), so its steps kept the deadlines of
// no plan and no accuracy scaling. Its rate is both steps' load.
func TestAPipelineOfAModelInTwoStepsIsPlanned(t *testing.T) {
	c, p := variantCatalog()
	e := p.Config.Ensemble
	e.Steps = append(e.Steps, repository.EnsembleStep{Model: "cls", At: 2, Inputs: map[string]string{"object": "objects"},
		Outputs: map[string]string{"labels": "again"}, Needs: []int{0}, Beside: true})
	p.Outputs = append(p.Outputs, repository.TensorSpec{Name: "again", DataType: tensor.FP32, Dims: []int64{-1, 4}})
	p.Config.PathAccuracy = nil
	n := &node{catalog: c, log: zap.NewNop()}
	n.pipes.rows("p", "det", 4)
	profile := func(m *repository.Model) (*gpulet.Profile, error) {
		return linearProfile(t, m.Name, 1, 0.5), nil
	}
	spec, err := n.pipelineSpec(p, 50, profile)
	require.NoError(t, err)
	require.Len(t, spec.Tasks, 3)
	pl, err := planPipelineSpec(spec, 10, 0, 6)
	require.NoError(t, err)
	require.Len(t, pl.Tasks, 3)
	require.InDelta(t, pl.Tasks[1].Load, pl.Tasks[2].Load, 1e-9, "each of its steps takes every object")
	rates := pipelineRates(map[string]float64{"p": 10}, nil, []pipeline.Plan{pl})
	var cls float64
	for _, tp := range pl.Tasks[1:] {
		for _, v := range tp.Variants {
			if v.Variant == "cls" {
				cls += tp.Load * v.Share / 1.2
			}
		}
	}
	require.Positive(t, cls)
	require.InDelta(t, cls, rates["cls"], 1e-9, "both steps' shares")
}
