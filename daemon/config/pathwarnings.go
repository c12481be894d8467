package config

import (
	"fmt"

	"github.com/gpulet/gpuletd/executor/cudalibs"
)

// folderWarnings are the configured CUDA library folders that name no folder
// on this machine: a typo there (or a PyTorch upgraded to another Python)
// would leave the CUDA libraries unfound with nothing pointing at the
// setting. They warn rather than stop: the loader may still find the
// libraries elsewhere, and a configuration may be written for other hosts.
// An entry names a folder when the executors' loader path would take one
// from it (cudalibs.ExpandDirs).
func (l *Loaded) folderWarnings() []string {
	var out []string
	for i, d := range l.Config.ONNXRuntime.CUDALibraryDirs {
		if len(cudalibs.ExpandDirs([]string{d})) > 0 {
			continue
		}
		out = append(out, fmt.Sprintf("onnxruntime.cuda_library_dirs[%d] %q (from %s) names no folder on this machine, so it adds none: the CUDA libraries are found only where the loader finds them by itself (LD_LIBRARY_PATH, its cache, the usual CUDA folders)",
			i, d, l.Sources["onnxruntime.cuda_library_dirs"]))
	}
	return out
}
