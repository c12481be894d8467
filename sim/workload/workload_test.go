package workload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/stretchr/testify/require"
)

func TestDecodeExample(t *testing.T) {
	w, err := Load(filepath.Join("testdata", "example.yaml"))
	require.NoError(t, err)
	require.Len(t, w.Devices, 1)
	require.Equal(t, Device{Profiles: "igniter-v100", Count: 4, Partitioning: "mps", Sizes: []int{20, 40, 50, 60, 80, 100}}, w.Devices[0])
	require.Len(t, w.Models, 3)
	require.Equal(t, Model{Name: "resnet50", Profile: "resnet50", SLOMS: 95, Rate: 400, Arrival: "poisson"}, w.Models[0])
	require.Equal(t, []Phase{{At: Duration(300 * time.Second), Rates: map[string]float64{"resnet50": 800}}}, w.Phases)
	require.Equal(t, 60*time.Second, w.Duration.Std())
	require.Equal(t, uint64(1), w.Seed)
	require.Equal(t, "gpulet-int", w.Algo)
	require.Equal(t, "deferred", w.Policy)
}

func TestDecodeFormatErrors(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"unknown field names its line", "devices:\n  - profiles: igniter-v100\n    partitions: mps\nmodels:\n  - {name: a, rate: 1}\n", "line 3"},
		{"unknown top-level field", "devices: [{profiles: igniter-v100}]\nmodels: [{name: a, rate: 1}]\nalgorithm: sbp\n", "line 3"},
		{"wrong type", "devices: [{profiles: igniter-v100, count: four}]\nmodels: [{name: a, rate: 1}]\n", "line 1"},
		{"duration without unit", "devices: [{profiles: igniter-v100}]\nmodels: [{name: a, rate: 1}]\nduration: 60\n", "line 3"},
		{"not YAML", "devices: [\n", "line"},
		{"empty", "", "empty"},
		{"two documents", "devices: [{profiles: igniter-v100}]\nmodels: [{name: a, rate: 1}]\n---\nseed: 2\n", "more than one"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tc.doc), "w.yaml")
			require.ErrorIs(t, err, ErrFormat)
			require.Contains(t, err.Error(), tc.want)
			require.Contains(t, err.Error(), "w.yaml")
		})
	}
	_, err := Load(filepath.Join("testdata", "unknown-field.yaml"))
	require.ErrorIs(t, err, ErrFormat)
	require.Contains(t, err.Error(), "line 4")
	require.Contains(t, err.Error(), "partitions")
	_, err = Load(filepath.Join("testdata", "absent.yaml"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestValidate(t *testing.T) {
	valid := func() Workload {
		return Workload{
			Devices: []Device{{Profiles: "igniter-v100", Count: 2}},
			Models:  []Model{{Name: "alexnet", Rate: 100}, {Name: "vgg", Profile: "vgg19", Rate: 50}},
		}
	}
	tests := []struct {
		name    string
		edit    func(w *Workload)
		field   string
		allowed string
	}{
		{"no devices", func(w *Workload) { w.Devices = nil }, "devices", "at least one"},
		{"no profiles", func(w *Workload) { w.Devices[0].Profiles = " " }, "devices[0].profiles", "reference profile set"},
		{"negative count", func(w *Workload) { w.Devices[0].Count = -1 }, "devices[0].count", "≥ 1"},
		{"partitioning", func(w *Workload) { w.Devices[0].Partitioning = "mps2" }, "devices[0].partitioning", "mps, mig, none"},
		{"size", func(w *Workload) { w.Devices[0].Sizes = []int{20, 120} }, "devices[0].sizes[1]", "1..100"},
		{"size twice", func(w *Workload) { w.Devices[0].Sizes = []int{20, 20} }, "devices[0].sizes[1]", "once"},
		{"sizes with none", func(w *Workload) { w.Devices[0].Partitioning, w.Devices[0].Sizes = "none", []int{50} }, "devices[0].sizes", "[100]"},
		{"mig without mig", func(w *Workload) { w.Devices[0].MIG = "A100-40GB" }, "devices[0].mig", "partitioning: mig"},
		{"max gpu-lets", func(w *Workload) { w.Devices[0].MaxGPULets = -2 }, "devices[0].max_gpulets", "≥ 1"},
		{"no models", func(w *Workload) { w.Models = nil }, "models", "at least one"},
		{"no name", func(w *Workload) { w.Models[1].Name = "" }, "models[1].name", "a model name"},
		{"name twice", func(w *Workload) { w.Models[1].Name = "alexnet" }, "models[1].name", "not used"},
		{"negative rate", func(w *Workload) { w.Models[0].Rate = -3 }, "models[0].rate", "≥ 0"},
		{"negative SLO", func(w *Workload) { w.Models[0].SLOMS = -3 }, "models[0].slo_ms", "> 0"},
		{"arrival", func(w *Workload) { w.Models[0].Arrival = "uniform" }, "models[0].arrival", "poisson"},
		{"phase order", func(w *Workload) {
			w.Phases = []Phase{{At: Duration(time.Minute)}, {At: Duration(time.Second)}}
		}, "phases[1].at", "later"},
		{"phase model", func(w *Workload) {
			w.Phases = []Phase{{At: 0, Rates: map[string]float64{"lenet": 3}}}
		}, "phases[0].rates", "names of models"},
		{"phase rate", func(w *Workload) {
			w.Phases = []Phase{{At: 0, Rates: map[string]float64{"alexnet": -3}}}
		}, "phases[0].rates.alexnet", "≥ 0"},
		{"duration", func(w *Workload) { w.Duration = -1 }, "duration", "≥ 0"},
		{"algo", func(w *Workload) { w.Algo = "best" }, "algo", "gpulet, gpulet-int, sbp, ideal"},
		{"policy", func(w *Workload) { w.Policy = "lazy" }, "policy", "deferred"},
		{"pipeline beside models", func(w *Workload) {
			w.Pipelines = []Pipeline{{Builtin: "traffic-analysis", Rate: 1}}
		}, "pipelines", "one or the other"},
		{"pipeline builtin", func(w *Workload) {
			w.Models, w.Pipelines = nil, []Pipeline{{Builtin: "video", Rate: 1}}
		}, "pipelines[0].builtin", "traffic-analysis"},
		{"two pipelines", func(w *Workload) {
			w.Models, w.Pipelines = nil, []Pipeline{{Builtin: "traffic-analysis", Rate: 1}, {Name: "b", Builtin: "traffic-analysis", Rate: 1}}
		}, "pipelines", "one pipeline"},
		{"pipeline scaling", func(w *Workload) {
			w.Models, w.Pipelines = nil, []Pipeline{{Builtin: "traffic-analysis", Rate: 1, Scaling: "fast"}}
		}, "pipelines[0].scaling", "gpuletd, hardware, per-task"},
		{"pipeline accuracy floor", func(w *Workload) {
			w.Models, w.Pipelines = nil, []Pipeline{{Builtin: "traffic-analysis", Rate: 1, MinAccuracy: 1.2}}
		}, "pipelines[0].min_accuracy", "[0, 1]"},
		{"pipeline rate", func(w *Workload) {
			w.Models, w.Pipelines = nil, []Pipeline{{Builtin: "traffic-analysis", Rate: -1}}
		}, "pipelines[0].rate", "≥ 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := valid()
			require.NoError(t, w.Validate())
			tc.edit(&w)
			err := w.Validate()
			require.ErrorIs(t, err, ErrInvalid)
			var fe *FieldError
			require.True(t, errors.As(err, &fe))
			require.Equal(t, tc.field, fe.Field)
			require.Contains(t, fe.Allowed, tc.allowed)
			require.Contains(t, err.Error(), tc.field)
		})
	}
}

func TestInputFromReferenceSet(t *testing.T) {
	w, err := Load(filepath.Join("testdata", "example.yaml"))
	require.NoError(t, err)
	in, opts, err := w.Input()
	require.NoError(t, err)
	require.Len(t, in.GPUs, 4)
	for i, g := range in.GPUs {
		require.Equal(t, "gpu"+string(rune('0'+i)), g.ID)
		require.Equal(t, gpulet.BackendMPS, g.Backend)
		require.Equal(t, "igniter-v100", g.Type)
		require.InDelta(t, 16384, g.MemoryMB, 0)
	}
	require.NotNil(t, opts.Interference, "iGniter has measured pairs")
	require.InDelta(t, gpulet.DefaultInterferenceMargin, opts.InterferenceMargin, 0)
	require.Len(t, in.Demands, 3)
	require.InDelta(t, 95, in.Demands[0].SLOMS, 0, "the file's SLO")
	require.Equal(t, "vgg19", in.Demands[1].Profile.Model)
	l, _ := in.Demands[1].Profile.Latency(32, 100)
	require.InDelta(t, 2*l, in.Demands[1].SLOMS, 1e-9, "iGniter gives no SLO: the paper's rule")
	require.InDelta(t, 200, in.Demands[2].Rate, 0)
}

func TestInputErrors(t *testing.T) {
	tests := []struct {
		name, doc, field string
	}{
		{"unknown set", "devices: [{profiles: nope}]\nmodels: [{name: a, rate: 1}]\n", "devices[0].profiles"},
		{"unknown model", "devices: [{profiles: igniter-v100}]\nmodels: [{name: lenet, rate: 1}]\n", "models[0].profile"},
		{"mps on whole-GPU set", "devices: [{profiles: symphony-a100, partitioning: mps}]\nmodels: [{name: resnet50, rate: 1}]\n", "devices[0].partitioning"},
		{"size the set lacks", "devices: [{profiles: igniter-v100, sizes: [30]}]\nmodels: [{name: alexnet, rate: 1}]\n", "devices[0].sizes"},
		{"mig without a table", "devices: [{profiles: igniter-v100, partitioning: mig}]\nmodels: [{name: alexnet, rate: 1}]\n", "devices[0].mig"},
		{"mig size", "devices: [{profiles: igniter-v100, partitioning: mig, mig: A100-40GB, sizes: [50]}]\nmodels: [{name: alexnet, rate: 1}]\n", "devices[0].sizes"},
		{"pipeline the set cannot serve", "devices: [{profiles: igniter-v100}]\npipelines: [{builtin: traffic-analysis, rate: 1}]\n", "pipelines[0].builtin"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Decode(strings.NewReader(tc.doc), "w.yaml")
			require.NoError(t, err)
			_, _, err = w.Input()
			var fe *FieldError
			require.True(t, errors.As(err, &fe), "%v", err)
			require.Equal(t, tc.field, fe.Field)
			require.NotEmpty(t, fe.Allowed)
		})
	}
}

func TestPlan(t *testing.T) {
	ctx := context.Background()
	p, err := PlanFile(ctx, filepath.Join("testdata", "example.yaml"), "")
	require.NoError(t, err)
	require.Equal(t, gpulet.AlgoGpuletInt, p.Algo)
	require.True(t, p.Schedulable)
	require.InDelta(t, 400, p.Assigned()["resnet50"], 1e-6)

	p, err = PlanFile(ctx, filepath.Join("testdata", "example.yaml"), "sbp")
	require.NoError(t, err)
	require.Equal(t, gpulet.AlgoSBP, p.Algo)

	_, err = PlanFile(ctx, filepath.Join("testdata", "example.yaml"), "best")
	require.ErrorIs(t, err, ErrInvalid)

	p, err = PlanFile(ctx, filepath.Join("testdata", "mig.yaml"), "")
	require.NoError(t, err)
	require.True(t, p.Schedulable)
	for _, g := range p.GPUs {
		for _, l := range g.GPULets {
			require.NotEmpty(t, l.MIGProfile)
		}
	}

	w, err := Decode(strings.NewReader("devices: [{profiles: symphony-a100, count: 2}]\nmodels: [{name: resnet50, rate: 3000}, {name: vgg16, rate: 100}]\n"), "a100")
	require.NoError(t, err)
	p, err = Plan(ctx, w, "gpulet-int")
	require.NoError(t, err)
	for _, g := range p.GPUs {
		for _, l := range g.GPULets {
			require.Equal(t, 100, l.Size, "whole-GPU set")
		}
	}
}
