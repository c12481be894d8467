package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/gpuprobe"
)

// TestProviderCheckFromProbe: a provider reported as loading is one that ran
// the probe model itself; TensorRT that gave way to CUDA is reported as not
// loading, with what served instead and why.
func TestProviderCheckFromProbe(t *testing.T) {
	for _, tc := range []struct {
		name string
		pc   ProviderCheck
		res  gpuprobe.Result
		want ProviderCheck
	}{
		{"cuda runs", ProviderCheck{Name: "cuda", Installed: true},
			gpuprobe.Result{Provider: "cuda", OK: true, Used: "cuda"},
			ProviderCheck{Name: "cuda", Installed: true, Loads: true}},
		{"tensorrt runs", ProviderCheck{Name: "tensorrt", Installed: true},
			gpuprobe.Result{Provider: "tensorrt", OK: true, Used: "tensorrt"},
			ProviderCheck{Name: "tensorrt", Installed: true, Loads: true}},
		{"tensorrt gives way to cuda", ProviderCheck{Name: "tensorrt", Installed: true},
			gpuprobe.Result{Provider: "tensorrt", OK: true, Used: "cuda", Fallback: "TensorRT cannot be used: libnvinfer.so.10 not found",
				MissingLibrary: "libnvinfer.so.10", Fix: "install TensorRT 10"},
			ProviderCheck{Name: "tensorrt", Installed: true, FallsBackTo: "cuda", Error: "TensorRT cannot be used: libnvinfer.so.10 not found",
				MissingLibrary: "libnvinfer.so.10", Fix: "install TensorRT 10"}},
		{"cuda missing a library", ProviderCheck{Name: "cuda", Installed: true},
			gpuprobe.Result{Provider: "cuda", Error: "libcublasLt.so.13 not found", MissingLibrary: "libcublasLt.so.13", Fix: "install CUDA 13"},
			ProviderCheck{Name: "cuda", Installed: true, Error: "libcublasLt.so.13 not found", MissingLibrary: "libcublasLt.so.13", Fix: "install CUDA 13"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.pc.probed(tc.res))
		})
	}
}
