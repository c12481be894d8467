package workload

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// Workload is one workload file.
type Workload struct {
	Devices []Device `yaml:"devices"`
	Models  []Model  `yaml:"models"`
	// Phases change rates over time (simulation only).
	Phases []Phase `yaml:"phases,omitempty"`
	// Duration is how long a simulation runs.
	Duration Duration `yaml:"duration,omitempty"`
	// Seed seeds every random choice of a simulation.
	Seed uint64 `yaml:"seed,omitempty"`
	// Algo is the planner: gpulet, gpulet-int (default), sbp or ideal.
	Algo string `yaml:"algo,omitempty"`
	// Policy is the executors' scheduling policy (simulation only):
	// deferred (default), eager, timeout:<duration>, flex.
	Policy string `yaml:"policy,omitempty"`
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

// Phase sets new rates from a moment on (simulation only).
type Phase struct {
	At    Duration           `yaml:"at"`
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
