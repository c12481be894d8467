package gpulet

import (
	"errors"

	"github.com/gpulet/gpuletd/interference"
)

// Sentinel errors of the planners; match them with errors.Is.
var (
	// ErrBadInput: the planner input itself is unusable (no GPUs, a GPU
	// described inconsistently, an unknown algorithm). Bad demands are not
	// errors: they come back as unscheduled rate with a reason.
	ErrBadInput = errors.New("bad planner input")
	// ErrUnknownAlgo: no planner of that name.
	ErrUnknownAlgo = errors.New("unknown planner")
)

// Backend is how a GPU is cut into gpu-lets.
type Backend string

// Backends.
const (
	// BackendMPS cuts a GPU by MPS active-thread percentages: any sizes from
	// GPU.Sizes whose sum is at most 100.
	BackendMPS Backend = "mps"
	// BackendMIG cuts a GPU into MIG instances: sizes are the percentages
	// of the base MIG profiles and every layout must be one the hardware
	// can make (gpulet/migrules).
	BackendMIG Backend = "mig"
	// BackendNone does not cut the GPU: one gpu-let of 100%, models share
	// it in time only.
	BackendNone Backend = "none"
)

// DefaultMaxGPULets is the number of gpu-lets one GPU may hold unless a GPU
// says otherwise: two, as in the gpu-let paper (section 4.3: SPLIT cuts a
// whole GPU into the ideal size and the rest).
const DefaultMaxGPULets = 2

// GPU is one device the planner may cut into gpu-lets.
type GPU struct {
	// ID names the GPU in plans; plans and diffs identify gpu-lets by it.
	ID string `json:"id"`
	// Type is the device type whose profiles apply (Profile.DeviceType).
	Type string `json:"type"`
	// MemoryMB is the device memory models may use.
	MemoryMB float64 `json:"memory_mb"`
	// MemoryFrom says where MemoryMB comes from, for the reason a model
	// that fits in no gpu-let's memory is given; optional.
	MemoryFrom string `json:"memory_from,omitempty"`
	// Backend is how the GPU is partitioned.
	Backend Backend `json:"backend"`
	// Sizes are the gpu-let sizes allowed, percent of the GPU. For MPS the
	// empty list means DefaultMPSSizes; for MIG it means every base profile
	// of the MIG table; for none it is ignored (always 100).
	Sizes []int `json:"sizes,omitempty"`
	// MaxGPULets caps the gpu-lets on this GPU; 0 means DefaultMaxGPULets.
	MaxGPULets int `json:"max_gpulets,omitempty"`
	// MIGModel names the MIG table (migrules.Lookup) of a MIG GPU; empty
	// means look Type up.
	MIGModel string `json:"mig_model,omitempty"`
}

// DefaultMPSSizes are the MPS gpu-let sizes when a GPU gives none
// (DESIGN.md §3; the gpu-let paper's partitions, gpulet-evaluation.yaml
// schedulability.partitions_mps).
var DefaultMPSSizes = []int{20, 40, 50, 60, 80, 100}

// Demand is one model's load: what must be placed.
type Demand struct {
	// Name identifies the model; it must be unique in an input.
	Name string `json:"name"`
	// Profile is the model's L(b,p) on its device type; the model can only
	// be placed on GPUs whose Type is Profile.DeviceType or the type of
	// one of More.
	Profile *Profile `json:"-"`
	// More are the model's profiles on other device types, if any.
	More []*Profile `json:"-"`
	// SLOMS is the latency objective in ms: a request's worst case (waiting
	// for its batch to start plus the batch) must stay within it.
	SLOMS float64 `json:"slo_ms"`
	// Rate is the request rate to serve, requests/s.
	Rate float64 `json:"rate"`
	// MemoryMB is the device memory one loaded instance needs; 0 means the
	// profile's MemoryMB.
	MemoryMB float64 `json:"memory_mb"`
}

// Input is what every planner takes.
type Input struct {
	GPUs    []GPU    `json:"gpus"`
	Demands []Demand `json:"demands"`
}

// Predictor predicts the slowdown factor (co-located latency over solo
// latency, at least 1 for a slowdown) of s.Self while s.Other runs on a
// neighbouring gpu-let of the same GPU. *interference.Model is one.
type Predictor interface {
	Predict(s interference.Sample) float64
}

// Algo names a planner.
type Algo string

// Planners.
const (
	// AlgoGpulet is elastic partitioning without interference.
	AlgoGpulet Algo = "gpulet"
	// AlgoGpuletInt is elastic partitioning that checks every co-location
	// with the interference model.
	AlgoGpuletInt Algo = "gpulet-int"
	// AlgoSBP is Nexus's squishy bin packing: whole GPUs, temporal sharing.
	AlgoSBP Algo = "sbp"
	// AlgoIdeal is the exhaustive search over partition layouts and
	// placements, with interference when a Predictor is given.
	AlgoIdeal Algo = "ideal"
)

// Algos lists the planners in a fixed order.
func Algos() []Algo { return []Algo{AlgoGpulet, AlgoGpuletInt, AlgoSBP, AlgoIdeal} }

// AlgoNames are the names of Algos, in order.
func AlgoNames() []string {
	out := make([]string, 0, 4)
	for _, a := range Algos() {
		out = append(out, string(a))
	}
	return out
}
