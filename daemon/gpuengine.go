package daemon

import (
	"context"
	"fmt"
	"os"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/executor/cudalibs"
	"github.com/gpulet/gpuletd/executor/gpuprobe"
	"github.com/gpulet/gpuletd/mps"
)

// engineStatus is what the daemon learned at start about running models on
// its NVIDIA GPUs: shown by the admin API, `gpuletd status` and the page.
type engineStatus struct {
	// GPUs is how many NVIDIA GPUs the device layer found.
	GPUs int `json:"gpus"`
	// UsingGPUs is true when gpu-lets run on them.
	UsingGPUs bool `json:"using_gpus"`
	// Provider is the execution provider on NVIDIA gpu-lets.
	Provider string `json:"provider"`
	// Asked is the provider the configuration asks for when another one
	// runs (tensorrt, when TensorRT cannot be used and CUDA serves alone);
	// ProviderNote says why and ProviderFix how to mend it.
	Asked        string `json:"asked,omitempty"`
	ProviderNote string `json:"provider_note,omitempty"`
	ProviderFix  string `json:"provider_fix,omitempty"`
	// Reason says why the GPUs are not used; Fix how to mend it.
	Reason string `json:"reason,omitempty"`
	Fix    string `json:"fix,omitempty"`
	// Probe is the GPU engine check's result, when one ran.
	Probe *gpuprobe.Result `json:"probe,omitempty"`
	// LoaderPath is the LD_LIBRARY_PATH executors get for the CUDA
	// libraries; empty: the loader's own search.
	LoaderPath string `json:"loader_path,omitempty"`
}

// fallbackWords says which provider serves in place of the configured one
// and why; empty when the configured one serves.
func (s engineStatus) fallbackWords() string {
	if s.Asked == "" {
		return ""
	}
	return fmt.Sprintf("execution provider %s, not %s as configured: %s", s.Provider, s.Asked, s.ProviderNote)
}

// env is what every executor's environment gains.
func (s engineStatus) env() []string {
	if s.LoaderPath == "" {
		return nil
	}
	return []string{"LD_LIBRARY_PATH=" + s.LoaderPath}
}

// CUDAEnv is what an executor's environment needs for the CUDA libraries
// of cfg: LD_LIBRARY_PATH with the configured directories (nil when there
// are none and the loader's own search applies).
func CUDAEnv(cfg config.Config) []string {
	return engineStatus{LoaderPath: loaderPath(cfg)}.env()
}

func loaderPath(cfg config.Config) string {
	return cudalibs.LoaderPath(cudalibs.Search{Dirs: cfg.ONNXRuntime.CUDALibraryDirs}, os.Getenv("LD_LIBRARY_PATH"))
}

// deviceOpener opens the device layer and checks the GPU engine; its
// fields are seams for tests.
type deviceOpener struct {
	cfg    config.Config
	lib    string // libonnxruntime.so.1
	binary string // gpuletd for the probe child; empty: this one
	nvml   nvml.Interface
	runner mps.Runner
	probe  func(context.Context, gpuprobe.SpawnOptions) gpuprobe.Result
	log    *zap.Logger
	// onXid hears of the GPUs' Xid errors (mps.Options.OnXid); nil: none.
	onXid func(mps.XidEvent)
}

// open opens the devices. When they include NVIDIA GPUs it probes the GPU
// engine in a child process on the first one. If the engine does not work
// there, devices: auto serves on the CPU instead and says why; devices:
// nvidia (or a list naming NVIDIA GPUs) refuses to start, with the reason.
func (o deviceOpener) open(ctx context.Context) (*mps.Manager, engineStatus, error) {
	st := engineStatus{Provider: o.cfg.ONNXRuntime.Provider}
	spec, err := DeviceSpec(o.cfg)
	if err != nil {
		return nil, st, fmt.Errorf("devices: %w", err)
	}
	devices, err := mps.New(mps.Options{Spec: spec, NVML: o.nvml, Runner: o.runner, Logger: o.log.Named("devices"), OnXid: o.onXid})
	if err != nil {
		return nil, st, err
	}
	st, err = o.check(ctx, devices.Inventory())
	if err == nil && (st.GPUs == 0 || st.UsingGPUs) {
		return devices, st, nil
	}
	cctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if cerr := devices.Close(cctx); cerr != nil {
		o.log.Warn("close devices", zap.Error(cerr))
	}
	if err != nil {
		return nil, st, err
	}
	o.log.Warn("serving on the CPU instead of the NVIDIA GPUs", zap.String("reason", st.Reason), zap.String("fix", st.Fix))
	spec.Mode, spec.Entries = mps.ModeCPU, nil
	devices, err = mps.New(mps.Options{Spec: spec, Logger: o.log.Named("devices")})
	if err != nil {
		return nil, st, err
	}
	return devices, st, nil
}

// check probes the GPU engine on the first healthy NVIDIA GPU of inv. With
// the engine working, or no NVIDIA GPU, the devices serve as they are; with
// it broken the status says why, and that is an error unless devices is
// auto (the caller then serves on the CPU).
func (o deviceOpener) check(ctx context.Context, inv mps.Inventory) (engineStatus, error) {
	st := engineStatus{Provider: o.cfg.ONNXRuntime.Provider}
	var first *mps.Device
	for _, d := range inv.Devices {
		if d.Kind == mps.KindNVIDIA {
			st.GPUs++
			if first == nil && d.Health != mps.HealthFailed {
				first = &d
			}
		}
	}
	if st.GPUs == 0 {
		return st, nil
	}
	st.LoaderPath = loaderPath(o.cfg)
	var res gpuprobe.Result
	if first == nil {
		res = gpuprobe.Result{Provider: st.Provider, Error: "every NVIDIA GPU has failed its health checks"}
	} else {
		visible := visibleOf(*first)
		if visible == "" {
			// A MIG GPU without instances yet: the engine is checked
			// when the first instance serves.
			o.log.Info("GPU engine not probed: the MIG GPU has no instance yet", zap.String("device", first.ID))
			st.UsingGPUs = true
			return st, nil
		}
		env := append(st.env(), "CUDA_VISIBLE_DEVICES="+visible)
		o.log.Info("checking the GPU engine", zap.String("provider", st.Provider), zap.String("device", first.ID), zap.String("visible", visible))
		res = o.probe(ctx, gpuprobe.SpawnOptions{Binary: o.binary, Env: env,
			Options: gpuprobe.Options{Library: o.lib, Provider: st.Provider}})
	}
	st.Probe = &res
	if res.OK {
		st.UsingGPUs = true
		if res.FellBack() {
			// Executors fall back the same way, each on its own.
			st.Asked, st.Provider, st.ProviderNote, st.ProviderFix = st.Provider, res.Used, res.Fallback, res.Fix
			o.log.Warn("the execution provider asked for cannot be used; another serves", zap.String("asked", st.Asked),
				zap.String("provider", st.Provider), zap.String("reason", st.ProviderNote), zap.String("fix", st.ProviderFix))
		}
		o.log.Info("GPU engine works", zap.String("provider", st.Provider), zap.Int("sm_count", res.SMCount),
			zap.Int64("memory_bytes", res.MemoryBytes), zap.Float64("max_abs_diff", res.MaxAbsDiff))
		return st, nil
	}
	st.Reason = fmt.Sprintf("the %s engine does not work on the NVIDIA GPUs: %s", st.Provider, res.Error)
	st.Fix = res.Fix
	if st.Fix == "" {
		st.Fix = "run `gpuletd doctor` for the driver, CUDA libraries and providers it finds"
	}
	if o.cfg.Devices.Mode != config.DevicesAuto {
		return st, fmt.Errorf("devices: %s: %w: %s (%s)", o.cfg.Devices.Mode, mps.ErrNoNVIDIA, st.Reason, st.Fix)
	}
	return st, nil
}

// visibleOf is what CUDA_VISIBLE_DEVICES names to reach a GPU: its UUID, or
// in MIG mode (where CUDA sees only instances) its first instance's; ""
// for a MIG GPU without instances.
func visibleOf(d mps.Device) string {
	if d.MIG == nil || !d.MIG.Enabled {
		return d.UUID
	}
	for _, in := range d.MIG.Instances {
		if in.UUID != "" {
			return in.UUID
		}
	}
	return ""
}
