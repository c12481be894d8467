package profiler

import (
	"fmt"
	"math"
	"slices"

	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// DefaultBatches are the batch sizes profiled when a job names none: powers
// of two up to 32, the largest batch of the gpu-let paper's profiles
// (section 3.1 sweeps batches 1 to 32), cut at the model's largest batch.
var DefaultBatches = []int{1, 2, 4, 8, 16, 32}

// Model is the model a job profiles.
type Model struct {
	// Name is the repository name, or the file's name for a bare file.
	Name string `json:"name"`
	// Path is the model file the executors load.
	Path string `json:"path"`
	// SHA256 is the lowercase hex sha256 of the file: profiles are stored
	// under it, so a changed file is profiled again.
	SHA256 string `json:"sha256"`
	// Platform is the repository platform (onnxruntime when empty).
	Platform string `json:"platform,omitempty"`
	// SLOMS is the latency objective in ms; 0 when unknown (no SLO knee).
	SLOMS float64 `json:"slo_ms"`
	// MaxBatchSize is the largest batch; 0 means the model has no batch
	// dimension (only batch 1 can be profiled).
	MaxBatchSize int `json:"max_batch_size"`
	// Curve is the model's curve name in a reference set, for emulated
	// devices (the repository's profile: field); empty: Name.
	Curve string `json:"curve,omitempty"`
	// Shapes gives, by input, the dims of one request (without the batch
	// dimension) to measure at where the input has dynamic ones (the
	// repository's profile_shapes); an input not named has them at 1.
	Shapes map[string][]int64 `json:"shapes,omitempty"`
	// OpLibraries are the custom operator libraries ONNX Runtime loads
	// before it opens the model (the repository's model_operations).
	OpLibraries []string `json:"op_libraries,omitempty"`
	// GraphLevel is how far ONNX Runtime optimizes the model's graph (the
	// repository's optimization.graph.level; 0: every optimization).
	GraphLevel int `json:"graph_level,omitempty"`
}

// curve is the curve name used on emulated devices.
func (m Model) curve() string {
	if m.Curve != "" {
		return m.Curve
	}
	return m.Name
}

// Job is one profiling job: one model on one device over partition sizes ×
// batch sizes.
type Job struct {
	Model  Model
	Device mps.Device
	// Sizes are the partition sizes in percent; empty: every size the
	// device allows. Each must be one of Device.Sizes.
	Sizes []int
	// Batches are the batch sizes; empty: DefaultBatches up to the model's
	// largest batch.
	Batches []int
	// SkipPastMS, when positive, stops each size's batches at the first
	// whose median takes at least this long: a larger batch takes longer
	// still. The daemon's quick profile gives half the SLO, past which no
	// plan runs a batch, so a small gpu-let of a slow model is not measured
	// at batches it could never serve. It cannot be combined with Pairs,
	// which need every pair batch's solo latency.
	SkipPastMS float64
	// Pairs also measures co-locations of the model with itself on two
	// gpu-lets of the device (see measurePairs).
	Pairs bool
	// PairBatches is the batch grid of the co-locations; empty: the
	// smallest, a middle and the largest of Batches.
	PairBatches []int
	// UtilBatches are the batches at which solo utilisation is measured
	// (each a profiled batch); empty: every profiled batch. A meter such as
	// Nsight Compute replays every kernel, so fewer batches save minutes.
	UtilBatches []int
	// Force measures again even when the store holds a complete profile of
	// this model file on this device type.
	Force bool
	// Rule decides how many runs each point gets; zero fields take
	// DefaultStopRule's.
	Rule StopRule
	// Store keeps the results. Required.
	Store *store.Store
	// Launcher starts the executors; required on cpu and nvidia devices.
	Launcher Launcher
	// Meters measure solo utilisation, tried in order for each metric; none:
	// every utilisation is stored as unknown.
	Meters []UtilMeter
	// Physics answers on emulated devices; nil: built from the device's
	// reference set.
	Physics *refset.Physics
	// Progress, when set, is called as the job advances, from the job's
	// goroutine.
	Progress func(Progress)
	// Log receives the job's events; nil: none.
	Log *zap.Logger
}

// DeviceType is the name profiles of the device are stored under: "cpu"
// for the CPU, the reference set's name for an emulated device, the GPU's
// type for an NVIDIA one (mps.Device.Type in every case).
func DeviceType(d mps.Device) string {
	if d.Kind == mps.KindEmulated && d.Emulated != "" {
		return d.Emulated
	}
	return d.Type
}

// plan checks the job and fills its defaults.
func (j *Job) plan() error {
	m := j.Model
	fail := func(format string, args ...any) error {
		return fmt.Errorf("profile %s on %s: %w: %s", m.Name, j.Device.ID, ErrBadJob, fmt.Sprintf(format, args...))
	}
	switch {
	case j.Store == nil:
		return fail("no store")
	case m.Name == "" || m.SHA256 == "":
		return fail("the model needs a name and the sha256 of its file")
	case j.Device.ID == "" || DeviceType(j.Device) == "":
		return fail("no device")
	case m.MaxBatchSize < 0:
		return fail("max batch size %d is negative", m.MaxBatchSize)
	}
	if j.Device.Kind != mps.KindEmulated && m.Path == "" {
		return fail("no model file")
	}
	if len(j.Device.Sizes) == 0 {
		return fail("the device allows no partition size")
	}
	if len(j.Sizes) == 0 {
		j.Sizes = slices.Clone(j.Device.Sizes)
	}
	j.Sizes = sortedUnique(j.Sizes)
	for _, p := range j.Sizes {
		if !slices.Contains(j.Device.Sizes, p) {
			return fmt.Errorf("profile %s on %s: %w: %d%% (%s allows %v)", m.Name, j.Device.ID, ErrSizeNotAllowed, p, j.Device.ID, j.Device.Sizes)
		}
	}
	top := max(m.MaxBatchSize, 1)
	if len(j.Batches) == 0 {
		for _, b := range DefaultBatches {
			if b <= top {
				j.Batches = append(j.Batches, b)
			}
		}
	}
	j.Batches = sortedUnique(j.Batches)
	for _, b := range j.Batches {
		if b < 1 {
			return fail("batch %d: batches start at 1", b)
		}
		if b > top {
			if m.MaxBatchSize == 0 {
				return fail("batch %d: the model has no batch dimension (max_batch_size 0), only batch 1", b)
			}
			return fail("batch %d exceeds the model's max_batch_size %d", b, m.MaxBatchSize)
		}
	}
	j.UtilBatches = sortedUnique(j.UtilBatches)
	for _, b := range j.UtilBatches {
		if !slices.Contains(j.Batches, b) {
			return fail("utilisation batch %d is not one of the profiled batches %v", b, j.Batches)
		}
	}
	if j.Device.Kind != mps.KindEmulated && j.Launcher == nil {
		return fail("no executor launcher")
	}
	if j.SkipPastMS < 0 || math.IsNaN(j.SkipPastMS) || math.IsInf(j.SkipPastMS, 0) {
		return fail("skip past %v ms: must be a positive, finite time or 0 (measure every batch)", j.SkipPastMS)
	}
	if j.Pairs && j.SkipPastMS > 0 {
		return fail("co-locations need every pair batch's solo latency: skip past %v ms cannot be combined with pairs", j.SkipPastMS)
	}
	if j.Pairs {
		if len(j.PairBatches) == 0 {
			j.PairBatches = gridOf(j.Batches)
		}
		j.PairBatches = sortedUnique(j.PairBatches)
		for _, b := range j.PairBatches {
			if !slices.Contains(j.Batches, b) {
				return fail("pair batch %d is not one of the profiled batches %v (co-locations need the solo latency)", b, j.Batches)
			}
		}
		if len(pairSplits(j.Sizes, j.Device.Sizes)) == 0 {
			return fmt.Errorf("profile %s on %s: %w: no two profiled sizes split the device (p and 100−p among %v)", m.Name, j.Device.ID, ErrSizeNotAllowed, j.Sizes)
		}
	}
	j.Rule = j.Rule.withDefaults()
	if j.Log == nil {
		j.Log = zap.NewNop()
	}
	return nil
}

// gridOf picks the smallest, a middle and the largest batch.
func gridOf(batches []int) []int {
	if len(batches) <= 3 {
		return slices.Clone(batches)
	}
	return []int{batches[0], batches[len(batches)/2], batches[len(batches)-1]}
}

// pairSplits are the co-location splits (p, 100−p) with p ≤ 100−p, p among
// the profiled sizes and 100−p among them too (so both sides have a solo
// latency), and the device allowing both.
func pairSplits(sizes, allowed []int) [][2]int {
	var out [][2]int
	for _, p := range sizes {
		q := 100 - p
		if p <= q && q > 0 && slices.Contains(sizes, q) && slices.Contains(allowed, p) && slices.Contains(allowed, q) {
			out = append(out, [2]int{p, q})
		}
	}
	return out
}

func sortedUnique(xs []int) []int {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}
