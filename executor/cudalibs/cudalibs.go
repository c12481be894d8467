// Package cudalibs finds the NVIDIA libraries ONNX Runtime's GPU providers
// need (the CUDA 13 runtime, cuBLAS, cuRAND, cuDNN 9, TensorRT 10 and the
// driver's libcuda) and says how to get each one that is missing. It only
// looks at files: loading them is the provider's business.
package cudalibs

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpulet/gpuletd/internal/container"
)

// Lib is one library the providers need.
type Lib struct {
	// Name is the file name the loader asks for (its soname).
	Name string `json:"name"`
	// For says what needs it: "driver", "cuda" or "tensorrt".
	For string `json:"for"`
	// Path is where it was found; empty when missing.
	Path string `json:"path,omitempty"`
	// Fix says how to get it when it is missing.
	Fix string `json:"fix,omitempty"`
}

// Found says whether the library was found.
func (l Lib) Found() bool { return l.Path != "" }

// What the providers in ONNX Runtime 1.29.0's linux-x64 GPU package need
// (their ELF NEEDED entries; cuDNN is loaded by the CUDA provider at run
// time).
var needed = []Lib{
	{Name: "libcuda.so.1", For: "driver"},
	{Name: "libcudart.so.13", For: "cuda"},
	{Name: "libcublas.so.13", For: "cuda"},
	{Name: "libcublasLt.so.13", For: "cuda"},
	{Name: "libcurand.so.10", For: "cuda"},
	{Name: "libcudnn.so.9", For: "cuda"},
	{Name: "libnvinfer.so.10", For: "tensorrt"},
	{Name: "libnvonnxparser.so.10", For: "tensorrt"},
}

// Fix says how to get a library the loader could not find: on a host, what
// to install; in a container (container.Detect), how to run it.
func Fix(name string) string { return fixFor(name, container.Detect()) }

// fixFor is Fix on a host or, inContainer, in a container: there the
// driver's libcuda comes with the GPUs passed in, and the CUDA runtime and
// cuDNN with the image built for GPUs.
func fixFor(name string, inContainer bool) string {
	if inContainer {
		switch {
		case name == "libcuda.so.1":
			return container.GPUs
		case strings.HasPrefix(name, "libnvinfer"), strings.HasPrefix(name, "libnvonnxparser"):
			return container.TensorRT
		case strings.HasPrefix(name, "libcu"), strings.HasPrefix(name, "libnv"):
			return container.CUDABase
		}
	}
	switch {
	case name == "libcuda.so.1":
		return "install the NVIDIA driver (libcuda.so.1 comes with it; nvidia-smi must work)"
	case strings.HasPrefix(name, "libcudnn"):
		return "install cuDNN 9 for CUDA 13 (apt: libcudnn9-cuda-13; pip: nvidia-cudnn-cu13) and, if it is not in the loader's path, add its lib directory to onnxruntime.cuda_library_dirs"
	case strings.HasPrefix(name, "libnvinfer"), strings.HasPrefix(name, "libnvonnxparser"):
		return "install TensorRT 10 for CUDA 13 (apt: libnvinfer10 libnvonnxparsers10) or use provider cuda"
	case strings.HasPrefix(name, "libcu"), strings.HasPrefix(name, "libnv"):
		return "install the CUDA 13 runtime libraries (apt: cuda-libraries-13-0 from NVIDIA's repository; or a CUDA 13 PyTorch's nvidia/*/lib folders) and, if they are not in the loader's path, list their directories in onnxruntime.cuda_library_dirs (GPULETD_ONNXRUNTIME_CUDA_LIBRARY_DIRS)"
	}
	return "install the package that provides " + name + " or add its directory to onnxruntime.cuda_library_dirs"
}

// Search says where to look, in order.
type Search struct {
	// Dirs are the configured directories (onnxruntime.cuda_library_dirs);
	// a pattern such as /opt/torch/lib/python3.12/site-packages/nvidia/*/lib
	// is expanded.
	Dirs []string
	// LDLibraryPath is the loader's LD_LIBRARY_PATH.
	LDLibraryPath string
	// Cache maps sonames to paths as the loader's cache knows them
	// (ldconfig -p); nil reads it.
	Cache map[string]string
	// System are the usual install places, searched last; nil means
	// SystemDirs().
	System []string
}

// SystemDirs are where CUDA installs its libraries.
func SystemDirs() []string {
	dirs, _ := filepath.Glob("/usr/local/cuda*/targets/x86_64-linux/lib")
	more, _ := filepath.Glob("/usr/local/cuda*/lib64")
	return append(append(dirs, more...), "/usr/lib/x86_64-linux-gnu", "/usr/lib64")
}

// Find looks for every library the providers need.
func Find(s Search) []Lib {
	s, dirs := s.prepared()
	out := make([]Lib, len(needed))
	for i, l := range needed {
		out[i] = l
		out[i].Path = find(l.Name, dirs, s.Cache, s.System)
		if out[i].Path == "" {
			out[i].Fix = Fix(l.Name)
		}
	}
	return out
}

// Path is where the library name is, looked for as Find looks; "" when it
// is nowhere.
func Path(name string, s Search) string {
	s, dirs := s.prepared()
	return find(name, dirs, s.Cache, s.System)
}

// prepared is s with the loader's cache and the system's folders filled in
// where not given, and the folders to look in first.
func (s Search) prepared() (Search, []string) {
	if s.Cache == nil {
		s.Cache = LoaderCache()
	}
	if s.System == nil {
		s.System = SystemDirs()
	}
	return s, slices.Concat(ExpandDirs(s.Dirs), filepath.SplitList(s.LDLibraryPath))
}

func find(name string, dirs []string, cache map[string]string, system []string) string {
	for _, d := range dirs {
		if p := filepath.Join(d, name); isFile(p) {
			return p
		}
	}
	if p, ok := cache[name]; ok {
		return p
	}
	for _, d := range system {
		if p := filepath.Join(d, name); isFile(p) {
			return p
		}
	}
	return ""
}

// ExpandDirs expands glob patterns and drops what is not a directory.
func ExpandDirs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		matches, err := filepath.Glob(d)
		if err != nil || len(matches) == 0 {
			matches = []string{d}
		}
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.IsDir() && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// LoaderPath returns the LD_LIBRARY_PATH a process that loads the GPU
// providers needs: the configured directories (expanded; every one, so that
// libraries a provider loads by itself at run time, cuDNN's engines, are
// found too), then current.
func LoaderPath(s Search, current string) string {
	dirs := ExpandDirs(s.Dirs)
	for _, d := range filepath.SplitList(current) {
		if d != "" && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return strings.Join(dirs, string(filepath.ListSeparator))
}

// LoaderCache reads the dynamic loader's cache (ldconfig -p): soname → path,
// x86-64 entries only. It is empty when ldconfig cannot be run.
func LoaderCache() map[string]string {
	bin := "/sbin/ldconfig"
	if !isFile(bin) {
		bin = "ldconfig"
	}
	out, err := exec.Command(bin, "-p").Output()
	if err != nil {
		return map[string]string{}
	}
	return ParseLoaderCache(string(out))
}

// ParseLoaderCache parses ldconfig -p output. Lines look like
// "\tlibcudart.so.13 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.13".
func ParseLoaderCache(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), " (")
		if !ok {
			continue
		}
		flags, path, ok := strings.Cut(rest, ") => ")
		if !ok || !strings.Contains(flags, "x86-64") {
			continue
		}
		if _, dup := m[name]; !dup {
			m[name] = strings.TrimSpace(path)
		}
	}
	return m
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
