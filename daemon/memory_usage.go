package daemon

import (
	"cmp"
	"math"
	"slices"

	"github.com/gpulet/gpuletd/kserve"
	"github.com/gpulet/gpuletd/mps"
)

// Triton's memory_usage statistic: what a model's loaded copies hold, so
// that a client can tell what unloading it would free. gpuletd reports
// what its planner counts for each copy the running gpu-lets hold (the
// profile run's measured memory, a configured memory_mb, a reference set's
// figure or the estimate from the file's size: `gpuletd models show`
// says which), summed by device: "GPU" with the device's index for an
// NVIDIA GPU (its NVML index; a MIG instance counts on its GPU) or an
// emulated one (its position among them: on a node that has both, an
// emulated GPU's entry may repeat a real one's index, each apart), "CPU"
// with 0 for the CPU device. A gpu-let still draining after a new plan
// counts until it ends, as its memory is held until then.

// memoryUsage is model name's memory_usage, sorted by type and id (a
// real and an emulated GPU of one index by gpuletd's device ID); empty,
// not nil, while no running gpu-let holds it (or none counts its memory).
func (n *node) memoryUsage(name string) []kserve.MemoryUsage {
	if n.sup == nil {
		return []kserve.MemoryUsage{}
	}
	type held struct {
		use    kserve.MemoryUsage
		device string // gpuletd's device ID
	}
	var out []held
	for _, g := range n.sup.list() {
		mb := g.plannedNow().Placement(name).HeldMB()
		if !(mb > 0) || math.IsInf(mb, 0) {
			continue
		}
		bytes := uint64(math.Round(mb * (1 << 20))) // the planner's MB are MiB
		if i := slices.IndexFunc(out, func(h held) bool { return h.device == g.device.ID }); i >= 0 {
			out[i].use.ByteSize += bytes
			continue
		}
		use := kserve.MemoryUsage{Type: "GPU", ID: int64(g.device.Index), ByteSize: bytes}
		if g.device.Kind == mps.KindCPU {
			use.Type, use.ID = "CPU", 0
		}
		out = append(out, held{use, g.device.ID})
	}
	slices.SortFunc(out, func(a, b held) int {
		return cmp.Or(cmp.Compare(a.use.Type, b.use.Type), cmp.Compare(a.use.ID, b.use.ID), cmp.Compare(a.device, b.device))
	})
	uses := make([]kserve.MemoryUsage, len(out))
	for i, h := range out {
		uses[i] = h.use
	}
	return uses
}
