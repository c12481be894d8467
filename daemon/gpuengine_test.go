package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/executor/gpuprobe"
	"github.com/gpulet/gpuletd/mps"
)

func TestCheckGPUEngine(t *testing.T) {
	cudaDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cudaDir, "libcudart.so.13"), nil, 0o644))
	gpu := mps.Device{ID: "gpu0", Kind: mps.KindNVIDIA, UUID: "GPU-aaaa", Backend: mps.BackendMPS, Health: mps.HealthOK}
	failed := gpu
	failed.Health = mps.HealthFailed
	mig := mps.Device{ID: "gpu1", Kind: mps.KindNVIDIA, UUID: "GPU-bbbb", Backend: mps.BackendMIG, Health: mps.HealthOK,
		MIG: &mps.MIGState{Enabled: true, Instances: []mps.MIGInstance{{UUID: "MIG-cccc", ComputeInstance: 0}}}}
	migEmpty := mig
	migEmpty.MIG = &mps.MIGState{Enabled: true}
	cpu := mps.Device{ID: "cpu", Kind: mps.KindCPU, Health: mps.HealthOK}
	broken := gpuprobe.Result{Provider: "cuda", Error: "libcublasLt.so.13: cannot open shared object file",
		MissingLibrary: "libcublasLt.so.13", Fix: "install the CUDA 13 runtime libraries"}
	works := gpuprobe.Result{Provider: "cuda", OK: true, SMCount: 132, Used: "cuda"}
	trtFallsBack := gpuprobe.Result{Provider: "tensorrt", OK: true, SMCount: 132, Used: "cuda",
		Fallback: "TensorRT cannot be used: libnvinfer.so.10 not found", MissingLibrary: "libnvinfer.so.10", Fix: "install TensorRT 10"}
	trtWorks := gpuprobe.Result{Provider: "tensorrt", OK: true, SMCount: 132, Used: "tensorrt"}

	tests := []struct {
		name     string
		mode     string
		provider string // configured; "": cuda
		devices  []mps.Device
		probe    gpuprobe.Result
		visible  string // CUDA_VISIBLE_DEVICES the probe got; "" when none ran
		usingGPU bool
		reason   string
		fix      string
		err      string
		serving  string // the provider st names; "": the configured one
		note     string // why it is not the configured one
	}{
		{name: "no GPU", mode: config.DevicesAuto, devices: []mps.Device{cpu}},
		{name: "engine works", mode: config.DevicesAuto, devices: []mps.Device{gpu}, probe: works, visible: "GPU-aaaa", usingGPU: true},
		{name: "auto falls back", mode: config.DevicesAuto, devices: []mps.Device{gpu}, probe: broken, visible: "GPU-aaaa",
			reason: "the cuda engine does not work on the NVIDIA GPUs: libcublasLt.so.13: cannot open shared object file", fix: "install the CUDA 13 runtime libraries"},
		{name: "nvidia refuses", mode: config.DevicesNvidia, devices: []mps.Device{gpu}, probe: broken, visible: "GPU-aaaa",
			err: "devices: nvidia: no NVIDIA GPU available: the cuda engine does not work on the NVIDIA GPUs: libcublasLt.so.13"},
		{name: "list refuses", mode: config.DevicesList, devices: []mps.Device{cpu, gpu}, probe: broken, visible: "GPU-aaaa",
			err: "devices: list: no NVIDIA GPU"},
		{name: "probe a healthy GPU", mode: config.DevicesAuto, devices: []mps.Device{failed, mig}, probe: works, visible: "MIG-cccc", usingGPU: true},
		{name: "every GPU failed", mode: config.DevicesAuto, devices: []mps.Device{failed}, reason: "every NVIDIA GPU has failed its health checks",
			fix: "run `gpuletd doctor`"},
		{name: "MIG without instances", mode: config.DevicesAuto, devices: []mps.Device{migEmpty}, usingGPU: true},
		{name: "tensorrt works", mode: config.DevicesAuto, provider: "tensorrt", devices: []mps.Device{gpu}, probe: trtWorks,
			visible: "GPU-aaaa", usingGPU: true},
		{name: "tensorrt falls back to cuda", mode: config.DevicesNvidia, provider: "tensorrt", devices: []mps.Device{gpu},
			probe: trtFallsBack, visible: "GPU-aaaa", usingGPU: true, serving: "cuda", note: "libnvinfer.so.10 not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Devices.Mode = tt.mode
			if tt.provider != "" {
				cfg.ONNXRuntime.Provider = tt.provider
			}
			cfg.ONNXRuntime.CUDALibraryDirs = []string{cudaDir}
			var got *gpuprobe.SpawnOptions
			o := deviceOpener{cfg: cfg, lib: "/lib/libonnxruntime.so.1", log: zaptest.NewLogger(t),
				probe: func(_ context.Context, so gpuprobe.SpawnOptions) gpuprobe.Result { got = &so; return tt.probe }}
			st, err := o.check(context.Background(), mps.Inventory{Devices: tt.devices})
			if tt.err != "" {
				require.ErrorIs(t, err, mps.ErrNoNVIDIA)
				require.ErrorContains(t, err, tt.err)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tt.usingGPU, st.UsingGPUs)
			if tt.reason == "" && tt.err == "" {
				require.Empty(t, st.Reason)
			}
			require.Contains(t, st.Reason, tt.reason)
			require.Contains(t, st.Fix, tt.fix)
			if tt.serving == "" {
				require.Equal(t, cfg.ONNXRuntime.Provider, st.Provider)
				require.Empty(t, st.Asked)
				require.Empty(t, st.ProviderNote)
				require.Empty(t, st.fallbackWords())
			} else {
				require.Equal(t, "execution provider cuda, not tensorrt as configured: TensorRT cannot be used: libnvinfer.so.10 not found", st.fallbackWords())
				require.Equal(t, tt.serving, st.Provider, "the status names the provider that serves")
				require.Equal(t, cfg.ONNXRuntime.Provider, st.Asked)
				require.Contains(t, st.ProviderNote, tt.note)
				require.Equal(t, "install TensorRT 10", st.ProviderFix)
			}
			if tt.visible == "" {
				require.Nil(t, got, "no probe")
				return
			}
			require.NotNil(t, got)
			require.Equal(t, cfg.ONNXRuntime.Provider, got.Options.Provider)
			require.Equal(t, "/lib/libonnxruntime.so.1", got.Options.Library)
			require.Contains(t, got.Env, "CUDA_VISIBLE_DEVICES="+tt.visible)
			var ld string
			for _, e := range got.Env {
				if v, ok := strings.CutPrefix(e, "LD_LIBRARY_PATH="); ok {
					ld = v
				}
			}
			require.True(t, strings.HasPrefix(ld, cudaDir), "the configured CUDA directory comes first: %q", ld)
			require.NotNil(t, st.Probe)
		})
	}
}

func TestOpenDevicesWithoutNVML(t *testing.T) {
	// devices: auto on a machine without a driver serves on the CPU
	// without probing anything.
	if _, err := os.Stat("/proc/driver/nvidia/version"); err == nil {
		t.Skip("this machine has an NVIDIA driver")
	}
	cfg := config.Default()
	o := deviceOpener{cfg: cfg, log: zaptest.NewLogger(t), nvml: newNVML(),
		probe: func(context.Context, gpuprobe.SpawnOptions) gpuprobe.Result {
			t.Fatal("no probe without GPUs")
			return gpuprobe.Result{}
		}}
	devices, st, err := o.open(context.Background())
	require.NoError(t, err)
	defer func() { require.NoError(t, devices.Close(context.Background())) }()
	require.Zero(t, st.GPUs)
	require.Equal(t, mps.KindCPU, devices.Inventory().Devices[0].Kind)

	cfg.Devices.Mode = config.DevicesNvidia
	_, _, err = deviceOpener{cfg: cfg, log: zaptest.NewLogger(t), nvml: newNVML()}.open(context.Background())
	require.ErrorIs(t, err, mps.ErrNoNVIDIA)
}
