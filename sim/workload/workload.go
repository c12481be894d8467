package workload

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// Workload is one workload file.
type Workload struct {
	// Sets are profile sets defined in the file from published whole-GPU
	// lines ℓ(b) = α·b + β (as Symphony's and SHEPHERD's tables give them);
	// devices name them like reference sets.
	Sets    []LinearSet `yaml:"sets,omitempty"`
	Devices []Device    `yaml:"devices"`
	Models  []Model     `yaml:"models,omitempty"`
	// Pipelines are pipelines to serve (simulation only), each a builtin
	// pipeline whose variants the device sets profile; a workload serves
	// either models or pipelines.
	Pipelines []Pipeline `yaml:"pipelines,omitempty"`
	// Phases change rates over time (simulation only).
	Phases []Phase `yaml:"phases,omitempty"`
	// Duration is how long a simulation runs.
	Duration Duration `yaml:"duration,omitempty"`
	// Seed seeds every random choice of a simulation.
	Seed uint64 `yaml:"seed,omitempty"`
	// Algo is the planner: gpulet, gpulet-int (default), sbp or ideal.
	Algo string `yaml:"algo,omitempty"`
	// Rule is the latency check the planner holds gpu-lets to: serving
	// (gpuletd's duty-cycle check, the default) or parvagpu (ParvaGPU's
	// batch latency below 0.9 × SLO / 2); see gpulet.Rule.
	Rule string `yaml:"rule,omitempty"`
	// Policy is the executors' scheduling policy (simulation only):
	// deferred (default), eager, timeout:<duration>, flex.
	Policy string `yaml:"policy,omitempty"`
	// Reorganize is the planner's period (simulation only): every period
	// the node re-plans from the measured rates, as the daemon does. Absent
	// means DefaultReorganize; 0s plans once, at the start.
	Reorganize *Duration `yaml:"reorganize,omitempty"`
	// Startup is how long a new gpu-let takes before it serves (simulation
	// only): process start, model load, warm-up. Absent means
	// DefaultStartup.
	Startup *Duration `yaml:"startup,omitempty"`

	// Dir is the folder relative trace paths are read from: the workload
	// file's folder when it was loaded from a file (Load), else empty (the
	// working directory).
	Dir string `yaml:"-"`
}

// DefaultReorganize is the reorganize period when a workload gives none:
// the daemon's default (scheduler.reorganize_period), the gpu-let paper's
// 20 s scheduling period (section 5, gpulet-evaluation.yaml
// scheduling_period_seconds).
const DefaultReorganize = 20 * time.Second

// DefaultStartup is how long a new gpu-let takes to serve when a workload
// gives no startup: the lower end of the 10–15 s the gpu-let paper measured
// for reorganizing a partition (section 5: spawn the process, load kernels
// and models, warm up; gpulet-evaluation.yaml reorganization_seconds).
const DefaultStartup = 10 * time.Second

// ReorganizePeriod is Reorganize, or DefaultReorganize when absent.
func (w *Workload) ReorganizePeriod() time.Duration {
	if w.Reorganize == nil {
		return DefaultReorganize
	}
	return w.Reorganize.Std()
}

// StartupDelay is Startup, or DefaultStartup when absent.
func (w *Workload) StartupDelay() time.Duration {
	if w.Startup == nil {
		return DefaultStartup
	}
	return w.Startup.Std()
}

// LinearSet is a whole-GPU profile set written in the workload: each
// model's batch latency on a whole GPU is α·b + β for b = 1..MaxBatch.
type LinearSet struct {
	// Name is how devices refer to the set; it must not be a reference
	// set's name.
	Name string `yaml:"name"`
	// GPU describes the device the lines were measured on (free text).
	GPU string `yaml:"gpu,omitempty"`
	// MemoryGiB is the device memory; 0 means 16.
	MemoryGiB float64 `yaml:"memory_gib,omitempty"`
	// MaxBatch is the largest batch; 0 means 32.
	MaxBatch int `yaml:"max_batch,omitempty"`
	// Source says where the lines come from (paper and table).
	Source string       `yaml:"source,omitempty"`
	Models []LinearLine `yaml:"models"`
}

// LinearLine is one model's published line.
type LinearLine struct {
	Name    string  `yaml:"name"`
	AlphaMS float64 `yaml:"alpha_ms"`
	BetaMS  float64 `yaml:"beta_ms"`
	// SLOMS is the SLO the source gives, 0 when none.
	SLOMS float64 `yaml:"slo_ms,omitempty"`
}

// Device is a group of identical GPUs.
type Device struct {
	// Profiles names the reference profile set (or a device type with
	// stored profiles) whose latencies the GPUs have.
	Profiles string `yaml:"profiles"`
	// Count is the number of GPUs; 0 means 1.
	Count int `yaml:"count,omitempty"`
	// Partitioning is mps, mig or none; empty means the set's own (mps
	// when it has partition profiles, none otherwise).
	Partitioning string `yaml:"partitioning,omitempty"`
	// Sizes are the allowed gpu-let sizes, percent; empty means the set's
	// (MPS) or every MIG profile (MIG).
	Sizes []int `yaml:"sizes,omitempty"`
	// MaxGPULets caps the gpu-lets per GPU; 0 means 2.
	MaxGPULets int `yaml:"max_gpulets,omitempty"`
	// MIG names the MIG table (A100-40GB, A100-80GB, H100-80GB) for
	// partitioning mig; empty means the set's GPU's.
	MIG string `yaml:"mig,omitempty"`
	// MemoryMB overrides the GPU memory; 0 means the set's GPU's.
	MemoryMB float64 `yaml:"memory_mb,omitempty"`
}

// Model is one model's demand.
type Model struct {
	Name string `yaml:"name"`
	// Profile is the model's name inside the profile set; empty means Name.
	Profile string `yaml:"profile,omitempty"`
	// SLOMS is the latency objective, ms; 0 means the set's SLO for the
	// model, or the gpu-let paper's rule (twice the solo batch-32 latency
	// on a whole GPU) when the set gives none.
	SLOMS float64 `yaml:"slo_ms,omitempty"`
	// Rate is the request rate, requests/s.
	Rate float64 `yaml:"rate"`
	// Arrival is the arrival process (simulation only): poisson (default),
	// gamma:<shape>, trace:<file>[@<rate scale>].
	Arrival string `yaml:"arrival,omitempty"`
	// MemoryMB overrides the model's memory footprint; 0 means the set's
	// estimate.
	MemoryMB float64 `yaml:"memory_mb,omitempty"`
}

// Pipeline is one pipeline's demand (simulation only): requests arrive at
// its first task, and every request a variant serves makes, on average,
// that variant's fanout of requests of the next task.
type Pipeline struct {
	// Name names the pipeline in results and phases; empty means Builtin.
	Name string `yaml:"name,omitempty"`
	// Builtin is the pipeline (pipeline.Builtins): traffic-analysis is
	// Loki's YOLOv5 detector and EfficientNet car classifier.
	Builtin string `yaml:"builtin"`
	// Rate is the request rate at the first task, requests/s.
	Rate float64 `yaml:"rate"`
	// Arrival is the arrival process, as for a model.
	Arrival string `yaml:"arrival,omitempty"`
	// MinAccuracy is the least end-to-end accuracy accuracy scaling may
	// go to, as a share of the pipeline's full accuracy (0: no floor).
	MinAccuracy float64 `yaml:"min_accuracy,omitempty"`
	// Scaling is how the node follows the demand (control.PipelineScaling):
	// gpuletd (default: hardware, then accuracy scaling over the
	// pipeline), hardware (full accuracy only) or per-task (each task
	// scaled on its own load).
	Scaling string `yaml:"scaling,omitempty"`
}

// PipelineName is p's name: Name, else Builtin.
func (p Pipeline) PipelineName() string {
	if p.Name != "" {
		return p.Name
	}
	return p.Builtin
}

// Phase sets new rates from a moment on (simulation only).
type Phase struct {
	At Duration `yaml:"at"`
	// Rates are new rates by model or pipeline name.
	Rates map[string]float64 `yaml:"rates"`
}

// Duration is a time.Duration written as Go writes it ("300s", "1m30s").
type Duration time.Duration

// UnmarshalYAML reads a duration with a unit.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return fmt.Errorf("line %d: duration: %w", n.Line, err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("line %d: duration %q: want a number with a unit, e.g. 300s or 1m30s", n.Line, s)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as Go writes it.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// Std returns the duration as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }
