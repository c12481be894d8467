package config

import (
	"fmt"
	"os"
	"path/filepath"
)

// folderWarnings are the configured CUDA library folders that name no folder
// on this machine: a typo there (or a PyTorch upgraded to another Python)
// would leave the CUDA libraries unfound with nothing pointing at the
// setting. They warn rather than stop: the loader may still find the
// libraries elsewhere, and a configuration may be written for other hosts.
func (l *Loaded) folderWarnings() []string {
	var out []string
	for i, d := range l.Config.ONNXRuntime.CUDALibraryDirs {
		if namesAFolder(d) {
			continue
		}
		out = append(out, fmt.Sprintf("onnxruntime.cuda_library_dirs[%d] %q (from %s) names no folder on this machine, so it adds none: the CUDA libraries are found only where the loader finds them by itself (LD_LIBRARY_PATH, its cache, the usual CUDA folders)",
			i, d, l.Sources["onnxruntime.cuda_library_dirs"]))
	}
	return out
}

// namesAFolder reports whether the path or glob pattern matches at least one
// directory.
func namesAFolder(pattern string) bool {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return false
	}
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}
