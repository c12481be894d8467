package daemon

import (
	"fmt"
	"path/filepath"

	"github.com/gpulet/gpuletd/internal/bytefmt"
	"github.com/gpulet/gpuletd/internal/memcg"
	"github.com/gpulet/gpuletd/mps"
)

// MemoryReport is the memory the models on the CPU may use, as far as
// doctor can see it: the host's, and a memory limit over the process doctor
// runs in (under systemd serve runs in the unit's cgroup instead, whose
// MemoryMax= doctor does not see), against what the database's models on
// the CPU were measured to need (host_memory.go).
type MemoryReport struct {
	// TotalBytes is the host's memory; 0 unknown.
	TotalBytes int64 `json:"total_bytes"`
	// LimitBytes is the tightest memory limit over doctor's own cgroup,
	// set by LimitOf; 0 none.
	LimitBytes int64  `json:"limit_bytes,omitempty"`
	LimitOf    string `json:"limit_of,omitempty"`
	// CPUModels is how many of the database's models were measured on the
	// CPU and CPUModelsBytes what they need together, one copy each; 0
	// when the database was not read or has none.
	CPUModels      int64 `json:"cpu_models,omitempty"`
	CPUModelsBytes int64 `json:"cpu_models_bytes,omitempty"`
	// CPUModelsWithExecutor is how many of them were measured before the
	// executor's own memory was told apart: each counts it until profiled
	// again (store.TypeMemory.WithExecutor).
	CPUModelsWithExecutor int64 `json:"cpu_models_with_executor,omitempty"`
	// Warning says that those models need more than the memory here.
	Warning string `json:"warning,omitempty"`
}

// memoryReport reads the host's memory and doctor's memory cgroup, and the
// measured memory of the CPU models from db (nil or unread: none).
func memoryReport(db *DatabaseReport, g *memcg.Group) *MemoryReport {
	h := readHostLimits(filepath.Join(procFS, "meminfo"), g)
	r := &MemoryReport{TotalBytes: h.TotalBytes, LimitBytes: h.LimitBytes, LimitOf: h.LimitOf}
	if db != nil && db.Summary != nil {
		for _, m := range db.Summary.Memory {
			if m.DeviceType == mps.CPUType {
				r.CPUModels, r.CPUModelsBytes, r.CPUModelsWithExecutor = m.Models, int64(m.MB*(1<<20)), m.WithExecutor
			}
		}
	}
	if bound := h.bound(); bound > 0 && r.CPUModelsBytes > bound {
		r.Warning = fmt.Sprintf("the database's CPU models need %s together, more than the %s gpuletd may use here: the plan will leave some out, and say why",
			bytefmt.Size(r.CPUModelsBytes), bytefmt.Size(bound))
	}
	return r
}
