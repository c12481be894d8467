//go:build gpu

package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGPUDoctor runs gpuletd doctor on a machine with an NVIDIA GPU (make
// test-gpu): the driver, the GPUs and the CUDA provider must all be found
// and serve must use the GPUs. It skips without a driver.
func TestGPUDoctor(t *testing.T) {
	if !haveNVIDIADriver() {
		t.Skip("no NVIDIA driver on this machine")
	}
	code, r, out := doctorJSON(t, daemonEnv(t, "GPULETD_DEVICES=auto"))
	t.Log(out)
	require.Equal(t, 0, code)
	require.True(t, r.Driver.Loaded, r.Driver.Error)
	require.NotEmpty(t, r.Driver.GPUs)
	for _, p := range r.Providers {
		switch {
		case p.Name == "cuda":
			require.True(t, p.Loads, "the CUDA provider runs a model: %s", p.Error)
		case p.Name == "tensorrt" && p.Installed && !p.Loads:
			// Without TensorRT's libraries the provider gives way to CUDA,
			// and the doctor says so instead of "loads".
			require.Equal(t, "cuda", p.FallsBackTo, "%+v", p)
			require.NotEmpty(t, p.Error)
		}
	}
	require.Equal(t, "nvidia", r.Serve.Use[0].Kind)
}
