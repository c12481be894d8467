package daemon

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/executor/cudalibs"
	"github.com/gpulet/gpuletd/executor/gpuprobe"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/internal/container"
	"github.com/gpulet/gpuletd/internal/memcg"
	"github.com/gpulet/gpuletd/mps"
)

// Report is what `gpuletd doctor` found: the driver and its GPUs, MPS, ONNX
// Runtime and its GPU providers, the CUDA libraries and the devices serve
// would use. OK is false when the configured devices cannot serve.
type Report struct {
	OK     bool       `json:"ok"`
	Driver mps.Driver `json:"driver"`
	// DriverFix says how to get the driver when it is not found: in a
	// container, how to pass the GPUs in; empty on a host, where the
	// driver's error says it.
	DriverFix string `json:"driver_fix,omitempty"`
	// Container: this runs in a container (container.Detect), and the
	// fixes say how to run it rather than what to install.
	Container     bool            `json:"container,omitempty"`
	MPS           MPSReport       `json:"mps"`
	ONNXRuntime   ORTReport       `json:"onnxruntime"`
	Providers     []ProviderCheck `json:"providers"`
	CUDALibraries []cudalibs.Lib  `json:"cuda_libraries"`
	// TLS is the listeners' certificate; nil without TLS.
	TLS *TLSReport `json:"tls,omitempty"`
	// Trace is the OpenTelemetry collector; nil unless traces go to one.
	Trace *TraceReport `json:"trace,omitempty"`
	// Folders are the folders and addresses serve needs; a problem there
	// is a warning (doctor may run as another user than serve will).
	Folders []FolderCheck `json:"folders"`
	// Database is state_dir's database as serve would open it.
	Database *DatabaseReport `json:"database,omitempty"`
	// Memory is the memory models on the CPU may use, against what the
	// database's CPU models need.
	Memory *MemoryReport `json:"memory,omitempty"`
	// Models is the model repository as serve would read it; nil when it
	// cannot be read (Folders says why) or ONNX Runtime does not load.
	Models *ModelsReport `json:"models,omitempty"`
	Serve  ServeReport   `json:"serve"`
	// ConfigWarnings are the configuration's warnings (a GPULETD_ variable
	// that names no field, a CUDA library folder that is not there), which
	// serve logs at start.
	ConfigWarnings []string `json:"config_warnings,omitempty"`
}

// MPSReport says whether MPS can be used.
type MPSReport struct {
	ControlBinary string `json:"control_binary"`
	// Path is where the control binary was found; empty when it was not.
	Path string `json:"path,omitempty"`
	// Daemons are the PIDs of running MPS control daemons.
	Daemons []int  `json:"daemons"`
	Fix     string `json:"fix,omitempty"`
}

// ORTReport is the ONNX Runtime library found.
type ORTReport struct {
	Library string `json:"library,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

// ProviderCheck is one GPU execution provider.
type ProviderCheck struct {
	Name string `json:"name"`
	// Library is the provider's file; Installed whether it is there.
	Library   string `json:"library"`
	Installed bool   `json:"installed"`
	// Loads is true when a child process loaded it and ran a model with
	// the CPU's outputs on a visible GPU.
	Loads bool `json:"loads"`
	// FallsBackTo is the provider that ran the model instead (cuda, for
	// TensorRT that cannot be used: Error says why); serve does the same.
	FallsBackTo    string `json:"falls_back_to,omitempty"`
	Error          string `json:"error,omitempty"`
	MissingLibrary string `json:"missing_library,omitempty"`
	Fix            string `json:"fix,omitempty"`
}

// probed is the check with the probe's result: a provider that gave way to
// another (TensorRT that cannot be used, CUDA running the model) does not
// load, whatever ran instead.
func (pc ProviderCheck) probed(res gpuprobe.Result) ProviderCheck {
	pc.Loads, pc.Error, pc.MissingLibrary, pc.Fix = res.OK, res.Error, res.MissingLibrary, res.Fix
	if res.FellBack() {
		pc.Loads, pc.FallsBackTo, pc.Error = false, res.Used, res.Fallback
	}
	return pc
}

// ServeReport is what serve would do with the configuration.
type ServeReport struct {
	// Devices is the configured mode (auto, nvidia, cpu, list).
	Devices string `json:"devices"`
	// Use lists the devices serve would use.
	Use []ServeDevice `json:"use"`
	// Note says why NVIDIA GPUs are not used; Error why serve would not
	// start.
	Note  string `json:"note,omitempty"`
	Error string `json:"error,omitempty"`
}

// ServeDevice is one device serve would use.
type ServeDevice struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	Type string `json:"type"`
	Name string `json:"name"`
	// Cores is how many cores the CPU device holds; CPULimit the cgroup's
	// CPU limit that narrowed them from OnlineCores (0: none).
	Cores       int     `json:"cores,omitempty"`
	CPULimit    float64 `json:"cpu_limit,omitempty"`
	OnlineCores int     `json:"online_cores,omitempty"`
}

// DoctorOptions are the doctor's inputs; NVML and Probe are seams for tests.
type DoctorOptions struct {
	Config config.Config
	// ConfigWarnings are the configuration loader's warnings, reported.
	ConfigWarnings []string
	// Binary is the gpuletd binary for probe children; empty: this one.
	Binary string
	NVML   func() nvml.Interface
	Probe  func(context.Context, gpuprobe.SpawnOptions) gpuprobe.Result
	Log    *zap.Logger
}

// Doctor checks everything gpuletd needs to serve on this machine.
func Doctor(ctx context.Context, o DoctorOptions) Report {
	if o.NVML == nil {
		o.NVML = newNVML
	}
	if o.Probe == nil {
		o.Probe = gpuprobe.Spawn
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	cfg := o.Config
	r := Report{Driver: mps.ReadDriver(o.NVML(), o.Log), Serve: ServeReport{Devices: cfg.Devices.Mode}, ConfigWarnings: o.ConfigWarnings,
		Container: container.Detect()}
	if !r.Driver.Loaded && r.Container {
		r.DriverFix = container.GPUs
	}
	r.MPS = mpsReport(cfg.MPS.ControlBinary, r.Container)
	r.TLS = tlsReport(cfg, time.Now())
	r.Trace = traceReport(ctx, cfg)
	r.Folders = folderChecks(cfg)
	r.Database = databaseReport(ctx, cfg)
	var group *memcg.Group
	if g, err := memcg.Self(); err == nil {
		group = &g
	}
	r.Memory = memoryReport(r.Database, group)
	r.CUDALibraries = cudalibs.Find(cudalibs.Search{Dirs: cfg.ONNXRuntime.CUDALibraryDirs, LDLibraryPath: os.Getenv("LD_LIBRARY_PATH")})

	lib, err := onnxrt.FindLibrary(cfg.ONNXRuntime.Library)
	if err == nil {
		err = onnxrt.Init(lib)
	}
	if err != nil {
		r.ONNXRuntime.Error = err.Error()
		r.Serve.Error = "ONNX Runtime does not load: " + err.Error()
		return r
	}
	r.ONNXRuntime = ORTReport{Library: lib, Version: onnxrt.Version()}
	r.Models = modelsReport(cfg, o.Binary, ServedCapabilities(cfg, r.Driver.GPUs))

	// The providers run on the first GPU (or MIG instance) there is.
	env := CUDAEnv(cfg)
	if v := firstVisible(r.Driver.GPUs); v != "" {
		env = append(env, "CUDA_VISIBLE_DEVICES="+v)
	}
	probes := map[string]gpuprobe.Result{}
	for _, name := range config.Providers {
		pc := ProviderCheck{Name: name}
		file := onnxrt.CUDAProviderLibrary
		if name == "tensorrt" {
			file = onnxrt.TensorRTProviderLibrary
		}
		pc.Library = filepath.Join(filepath.Dir(lib), file)
		_, serr := os.Stat(pc.Library)
		pc.Installed = serr == nil
		if !pc.Installed {
			pc.Error = "not installed"
			pc.Fix = "run make deps-gpu in the source tree, or unpack the release archive with the CUDA providers (gpuletd-VERSION-linux-amd64-cuda.tar.gz, from make dist-gpu) instead, or put its lib/gpuletd/ providers beside " + lib
			if r.Container {
				pc.Fix = container.GPUImage
			}
			probes[name] = gpuprobe.Result{Provider: name, Error: name + " provider not installed: " + pc.Fix, Fix: pc.Fix}
			r.Providers = append(r.Providers, pc)
			continue
		}
		res := o.Probe(ctx, gpuprobe.SpawnOptions{Binary: o.Binary, Env: env, Options: gpuprobe.Options{Library: lib, Provider: name}})
		probes[name] = res
		r.Providers = append(r.Providers, pc.probed(res))
	}

	// What serve would do, with the probe already made.
	opener := deviceOpener{cfg: cfg, lib: lib, nvml: o.NVML(), log: o.Log,
		probe: func(context.Context, gpuprobe.SpawnOptions) gpuprobe.Result { return probes[cfg.ONNXRuntime.Provider] }}
	devices, st, err := opener.open(ctx)
	if err != nil {
		r.Serve.Error = err.Error()
		return r
	}
	for _, d := range devices.Inventory().Devices {
		r.Serve.Use = append(r.Serve.Use, ServeDevice{ID: d.ID, Kind: string(d.Kind), Type: d.Type, Name: d.Name,
			Cores: len(d.Cores), CPULimit: d.CPULimit, OnlineCores: d.OnlineCores})
	}
	if cerr := devices.Close(ctx); cerr != nil {
		o.Log.Warn("close devices", zap.Error(cerr))
	}
	switch {
	case st.Reason != "":
		r.Serve.Note = "NVIDIA GPUs are not used: " + st.Reason
	case st.Asked != "":
		r.Serve.Note = st.fallbackWords()
	case st.GPUs == 0 && cfg.Devices.Mode == config.DevicesAuto:
		r.Serve.Note = "no NVIDIA GPU: serving on the CPU"
	}
	r.OK = (r.TLS == nil || r.TLS.Error == "") && r.Database.Problem == ""
	switch {
	case r.TLS != nil && r.TLS.Error != "":
		r.Serve.Error = r.TLS.Error
	case r.Database.Problem != "":
		r.Serve.Error = "database " + r.Database.Path + ": " + r.Database.Problem
	}
	return r
}

// firstVisible is what CUDA_VISIBLE_DEVICES names for a probe: the first
// GPU not in MIG mode, or the first MIG instance.
func firstVisible(gpus []mps.Device) string {
	for _, g := range gpus {
		if v := visibleOf(g); v != "" && g.Health != mps.HealthFailed {
			return v
		}
	}
	return ""
}

// mpsReport finds the MPS control program and the control daemons running;
// inContainer, its fix says how to have the program mounted in.
func mpsReport(binary string, inContainer bool) MPSReport {
	r := MPSReport{ControlBinary: binary, Daemons: []int{}}
	if p, err := exec.LookPath(binary); err == nil {
		r.Path = p
	} else {
		r.Fix = "install the NVIDIA driver's utilities (nvidia-cuda-mps-control comes with them) or set mps.control_binary"
		if inContainer {
			r.Fix = container.MPSControl
		}
		if !errors.Is(err, exec.ErrNotFound) {
			r.Fix = err.Error()
		}
	}
	r.Daemons = processesNamed("/proc", "nvidia-cuda-mps")
	return r
}

// processesNamed lists the PIDs under proc whose command name starts with
// prefix (the kernel keeps 15 characters of it).
func processesNamed(proc, prefix string) []int {
	out := []int{}
	entries, err := os.ReadDir(proc)
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join(proc, e.Name(), "comm"))
		if err == nil && strings.HasPrefix(strings.TrimSpace(string(comm)), prefix) {
			out = append(out, pid)
		}
	}
	return out
}
