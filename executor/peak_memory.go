package executor

import "github.com/gpulet/gpuletd/internal/procfs"

// selfStatusPath is where Linux describes the calling process, its memory
// high-water mark (VmHWM) among the rest.
const selfStatusPath = "/proc/self/status"

// peakResident reads the most memory the process has held resident since
// it started, in bytes, from a status file of the kernel's (selfStatusPath);
// 0 when it cannot be read. Read after a model's warm-up at every batch
// size it serves, it is what the model needs on a CPU gpu-let: the
// engine's weights, its arena at the largest batch and the process itself.
func peakResident(file string) int64 {
	b, err := procfs.KiBField(file, "VmHWM")
	if err != nil {
		return 0
	}
	return b
}
