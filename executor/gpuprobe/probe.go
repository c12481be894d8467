// Package gpuprobe checks that the GPU engine works before gpuletd relies on
// it: in a child process (a crash in a driver or provider library must not
// take the daemon down, as Ollama probes its runners), ONNX Runtime loads the
// execution provider, runs a small model on the visible GPU and compares
// the outputs with the CPU's. The parent reads the child's JSON answer.
package gpuprobe

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/gpulet/gpuletd/executor/cudart"
	"github.com/gpulet/gpuletd/executor/engine"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/modelzoo"
)

// Result is what a probe found.
type Result struct {
	// OK is true when the provider loaded and ran the model with outputs
	// equal to the CPU's within Tolerance (or, for TensorRT that cannot be
	// used, CUDA did: see Used).
	OK bool `json:"ok"`
	// Provider is the provider probed: cuda or tensorrt.
	Provider string `json:"provider"`
	// ONNXRuntime and Library are the loaded runtime's version and path.
	ONNXRuntime string `json:"onnxruntime_version,omitempty"`
	Library     string `json:"library,omitempty"`
	// VisibleDevices is the CUDA_VISIBLE_DEVICES the probe ran with.
	VisibleDevices string `json:"visible_devices,omitempty"`
	// Used is the provider that ran the model: Provider, or cuda when
	// TensorRT cannot be used and CUDA serves alone (Fallback says why,
	// MissingLibrary and Fix name the library TensorRT misses).
	Used     string `json:"used,omitempty"`
	Fallback string `json:"fallback,omitempty"`
	// Error says why it failed; MissingLibrary and Fix are set when the
	// loader did not find a library.
	Error          string `json:"error,omitempty"`
	MissingLibrary string `json:"missing_library,omitempty"`
	Fix            string `json:"fix,omitempty"`
	// Devices are the execution provider devices ONNX Runtime offered.
	Devices []onnxrt.EPDevice `json:"devices,omitempty"`
	// SMCount and MemoryBytes are the CUDA runtime's view of the device.
	SMCount     int   `json:"sm_count,omitempty"`
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// MaxAbsDiff is the largest difference from the CPU's outputs.
	MaxAbsDiff float64 `json:"max_abs_diff,omitempty"`
}

// FellBack tells whether another provider than the one probed ran the model
// (Used; TensorRT that cannot be used, CUDA in its place), as serving would.
func (r Result) FellBack() bool { return r.OK && r.Fallback != "" }

// Tolerance bounds how far GPU outputs may be from the CPU's (the GPU
// kernels sum in other orders and may use TF32).
const Tolerance = 1e-2

// probeModel is the model run: small, fully connected, every op CUDA has.
const probeModel = "mlp"

// Options say what to probe.
type Options struct {
	// Library is libonnxruntime.so.1; Provider cuda or tensorrt;
	// ProviderDir where its library is (empty: beside Library).
	Library, Provider, ProviderDir string
}

// Probe runs in the child process: it loads ONNX Runtime and the provider,
// runs the probe model there and on the CPU, and compares.
func Probe(ctx context.Context, o Options) Result {
	r := Result{Provider: o.Provider, Library: o.Library, VisibleDevices: os.Getenv("CUDA_VISIBLE_DEVICES")}
	fail := func(err error) Result {
		r.Error = err.Error()
		var ml *engine.MissingLibraryError
		if errors.As(err, &ml) {
			r.MissingLibrary, r.Fix = ml.Library, ml.Fix
		} else if lib := onnxrt.MissingLibrary(err); lib != "" {
			r.MissingLibrary = lib
		}
		return r
	}
	if err := onnxrt.Init(o.Library); err != nil {
		return fail(err)
	}
	r.ONNXRuntime = onnxrt.Version()
	gpu, err := engine.NewORT(engine.ORTOptions{Provider: o.Provider, ProviderDir: o.ProviderDir, IntraOpThreads: 1})
	if devs, derr := onnxrt.EPDevices(); derr == nil {
		r.Devices = devs
	}
	if err != nil {
		return fail(err)
	}
	defer func() { _ = gpu.Close() }()
	r.Used = gpu.Info().Provider
	if ferr := gpu.Fallback(); ferr != nil {
		r.Fallback = ferr.Error()
		var ml *engine.MissingLibraryError
		if errors.As(ferr, &ml) {
			// The loader's whole story is in the executors' logs; the
			// status and doctor say it in a line, the fix beside it.
			r.Fallback = fmt.Sprintf("%s cannot be used: %s not found", ml.Provider, ml.Library)
			r.MissingLibrary, r.Fix = ml.Library, ml.Fix
		}
	}
	if dev, err := cudart.Query(""); err == nil {
		r.SMCount, r.MemoryBytes = dev.SMCount, dev.MemoryTotal
	}
	cpu, err := engine.NewORT(engine.ORTOptions{Provider: engine.ProviderCPU, IntraOpThreads: 1})
	if err != nil {
		return fail(err)
	}
	defer func() { _ = cpu.Close() }()

	dir, err := os.MkdirTemp("", "gpuletd-probe-")
	if err != nil {
		return fail(fmt.Errorf("probe: %w", err))
	}
	defer func() { _ = os.RemoveAll(dir) }()
	b, err := modelzoo.BuildBytes(probeModel, 1)
	if err != nil {
		return fail(fmt.Errorf("probe: build model: %w", err))
	}
	path := filepath.Join(dir, probeModel+".onnx")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fail(fmt.Errorf("probe: %w", err))
	}
	want, err := engine.FixedBatch(ctx, cpu, probeModel, path, 4)
	if err != nil {
		return fail(fmt.Errorf("probe on the CPU: %w", err))
	}
	got, err := engine.FixedBatch(ctx, gpu, probeModel, path, 4)
	if err != nil {
		return fail(fmt.Errorf("probe on %s: %w", o.Provider, err))
	}
	r.MaxAbsDiff = maxAbsDiff(want, got)
	if !(r.MaxAbsDiff <= Tolerance) {
		return fail(fmt.Errorf("probe on %s: outputs differ from the CPU's by %g (tolerance %g)", o.Provider, r.MaxAbsDiff, Tolerance))
	}
	r.OK = true
	return r
}

func maxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	m := 0.0
	for i := range a {
		d := math.Abs(float64(a[i] - b[i]))
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		m = max(m, d)
	}
	return m
}
