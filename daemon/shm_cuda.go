package daemon

import (
	"fmt"
	"os"

	"github.com/gpulet/gpuletd/executor/cudalibs"
	"github.com/gpulet/gpuletd/executor/cudart"
)

// openCUDAMemory opens a client's CUDA IPC handle in the daemon with the
// CUDA runtime the GPU providers use: found in dirs
// (onnxruntime.cuda_library_dirs), then LD_LIBRARY_PATH and the loader's
// cache. The first region opens a CUDA context on its device in the
// daemon's process (device memory of its own, as any CUDA process has).
func openCUDAMemory(dirs func() []string) cudaOpener {
	return func(device int, handle []byte) (deviceMemory, error) {
		lib := cudalibs.Path(cudart.Library, cudalibs.Search{Dirs: dirs(), LDLibraryPath: os.Getenv("LD_LIBRARY_PATH")})
		m, err := cudart.OpenIPC(lib, device, handle)
		if err != nil {
			if lib == "" { // not found: say how to get it
				return nil, fmt.Errorf("%w (fix: %s)", err, cudalibs.Fix(cudart.Library))
			}
			return nil, err
		}
		return m, nil
	}
}
