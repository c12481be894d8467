package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/gpulet/gpuletd/executor/cudalibs"
	"github.com/gpulet/gpuletd/executor/onnxrt"
)

// Execution providers the onnxruntime engine can use.
const (
	ProviderCPU      = "cpu"
	ProviderCUDA     = "cuda"
	ProviderTensorRT = "tensorrt"
)

// Providers lists the execution providers NewORT accepts.
func Providers() []string { return []string{ProviderCPU, ProviderCUDA, ProviderTensorRT} }

// sessionOptions builds the session options every model of an engine
// shares: threads, graph optimisation and the execution provider. The
// caller destroys them.
func (o ORTOptions) sessionOptions() (*ort.SessionOptions, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("create session options: %s", oneLine(err))
	}
	if err := o.configure(opts); err != nil {
		_ = opts.Destroy()
		return nil, err
	}
	return opts, nil
}

// modelSessionOptions are the session options of one model: the engine's,
// with the model's graph optimization level and custom operator libraries.
// The caller destroys them.
func (o ORTOptions) modelSessionOptions(spec ModelSpec) (*ort.SessionOptions, error) {
	opts, err := o.sessionOptions()
	if err != nil {
		return nil, err
	}
	level := ort.GraphOptimizationLevel(ort.GraphOptimizationLevelEnableAll)
	switch spec.GraphLevel {
	case GraphLevelBasic:
		level = ort.GraphOptimizationLevelEnableBasic
	case GraphLevelExtended:
		level = ort.GraphOptimizationLevelEnableExtended
	}
	if level != ort.GraphOptimizationLevelEnableAll {
		if err := opts.SetGraphOptimizationLevel(level); err != nil {
			_ = opts.Destroy()
			return nil, fmt.Errorf("set graph optimization level %d: %s", spec.GraphLevel, oneLine(err))
		}
	}
	if err := onnxrt.RegisterOpLibraries(opts, spec.OpLibraries); err != nil {
		_ = opts.Destroy()
		return nil, fmt.Errorf("%w: %w", ErrLoadFailed, err)
	}
	return opts, nil
}

func (o ORTOptions) configure(opts *ort.SessionOptions) error {
	if err := opts.SetIntraOpNumThreads(o.IntraOpThreads); err != nil {
		return fmt.Errorf("set intra-op threads %d: %s", o.IntraOpThreads, oneLine(err))
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return fmt.Errorf("set inter-op threads: %s", oneLine(err))
	}
	if err := opts.SetGraphOptimizationLevel(ort.GraphOptimizationLevelEnableAll); err != nil {
		return fmt.Errorf("set graph optimization: %s", oneLine(err))
	}
	if o.DisableSpinning {
		if err := opts.AddSessionConfigEntry("session.intra_op.allow_spinning", "0"); err != nil {
			return fmt.Errorf("disable spinning: %s", oneLine(err))
		}
	}
	switch o.Provider {
	case ProviderCPU:
		return nil
	case ProviderCUDA:
		return appendCUDA(opts, o.ProviderDir, o.MemoryLimit, o.ConvAlgoSearch)
	case ProviderTensorRT:
		if err := appendTensorRT(opts, o.ProviderDir, o.DeviceID); err != nil {
			return &tensorRTError{err}
		}
		// Nodes TensorRT cannot take fall back to CUDA, then to the CPU.
		return appendCUDA(opts, o.ProviderDir, o.MemoryLimit, o.ConvAlgoSearch)
	}
	return fmt.Errorf("%w: unknown execution provider %q (have %v)", ErrProviderUnavailable, o.Provider, Providers())
}

// appendCUDA adds ONNX Runtime's CUDA plugin provider (registered from
// beside the core library) on the first CUDA device it offers: the one GPU
// or MIG instance CUDA_VISIBLE_DEVICES leaves visible to the executor.
// memLimit caps the provider's memory arena (bytes; 0: none); search is
// ORTOptions.ConvAlgoSearch.
func appendCUDA(opts *ort.SessionOptions, dir string, memLimit int64, search string) error {
	dev, err := cudaDevice(dir)
	if err != nil {
		return err
	}
	options := map[string]string{}
	if search != "" {
		options["cudnn_conv_algo_search"] = search
	}
	if memLimit > 0 {
		// The arena grows by what is asked, so the cap is not reached by
		// power-of-two rounding.
		options["gpu_mem_limit"] = strconv.FormatInt(memLimit, 10)
		options["arena_extend_strategy"] = "kSameAsRequested"
	}
	if err := onnxrt.AppendProvider(opts, dev, options); err != nil {
		return providerErr("CUDA", err)
	}
	return nil
}

// Values of ORTOptions.ConvAlgoSearch (the CUDA provider's
// cudnn_conv_algo_search). Measured on an H200 with one session per batch
// size (BenchmarkGPURunGaps), exhaustive and heuristic search ran lenet5 and
// resnet18 equally fast; without, every change of batch size cost 2.8 ms
// (heuristic) to 19 ms (exhaustive) on lenet5.
const (
	ConvSearchHeuristic  = "HEURISTIC"
	ConvSearchExhaustive = "EXHAUSTIVE"
	// ConvSearchDefault takes cuDNN's implicit-precomputed GEMM without
	// asking: no search at all.
	ConvSearchDefault = "DEFAULT"
)

// cudaDevice registers the CUDA provider library of dir (once per process)
// and returns its device.
func cudaDevice(dir string) (onnxrt.EPDevice, error) {
	lib, err := providerLibrary(dir, onnxrt.CUDAProviderLibrary)
	if err != nil {
		return onnxrt.EPDevice{}, providerErr("CUDA", err)
	}
	if err := onnxrt.RegisterProvider(ProviderCUDA+"@"+lib, lib); err != nil {
		return onnxrt.EPDevice{}, providerErr("CUDA", err)
	}
	dev, err := onnxrt.FindEPDevice(onnxrt.EPNameCUDA)
	if err != nil {
		return onnxrt.EPDevice{}, providerErr("CUDA", fmt.Errorf("%w: no GPU is visible to CUDA (CUDA_VISIBLE_DEVICES=%q)", err, os.Getenv("CUDA_VISIBLE_DEVICES")))
	}
	return dev, nil
}

// appendTensorRT adds the TensorRT provider: as a plugin provider when its
// library is one, else through the core's built-in TensorRT support. The
// error gives both reasons when neither works.
func appendTensorRT(opts *ort.SessionOptions, dir string, device int) error {
	lib, err := providerLibrary(dir, onnxrt.TensorRTProviderLibrary)
	if err != nil {
		return providerErr("TensorRT", err)
	}
	pluginErr := onnxrt.RegisterProvider(ProviderTensorRT+"@"+lib, lib)
	if pluginErr == nil {
		dev, err := onnxrt.FindEPDevice(onnxrt.EPNameTensorRT)
		if err == nil {
			if err := onnxrt.AppendProvider(opts, dev, nil); err != nil {
				return providerErr("TensorRT", err)
			}
			return nil
		}
		pluginErr = err
	}
	trt, err := ort.NewTensorRTProviderOptions()
	if err == nil {
		defer func() { _ = trt.Destroy() }()
		if err = trt.Update(map[string]string{"device_id": strconv.Itoa(device)}); err == nil {
			err = opts.AppendExecutionProviderTensorRT(trt)
		}
	}
	if err != nil {
		return providerErr("TensorRT", fmt.Errorf("as a plugin: %w; built in: %s", pluginErr, reason(err)))
	}
	return nil
}

// providerLibrary is the provider library file in dir, or beside the core
// library when dir is empty.
func providerLibrary(dir, file string) (string, error) {
	if dir != "" {
		return filepath.Join(dir, file), nil
	}
	return onnxrt.ProviderLibraryPath(file)
}

// providerErr says that the provider cannot be used, with ONNX Runtime's or
// the loader's reason and, for a missing library, how to get it.
func providerErr(provider string, err error) error {
	msg := fmt.Errorf("%w: %s cannot be used: %s", ErrProviderUnavailable, provider, reason(err))
	if lib := onnxrt.MissingLibrary(err); lib != "" {
		return &MissingLibraryError{Provider: provider, Library: lib, Fix: cudalibs.Fix(lib), err: msg}
	}
	if errors.Is(err, onnxrt.ErrProviderNotInstalled) {
		return fmt.Errorf("%w (run make deps-gpu, or install gpuletd's GPU providers beside %s)", msg, onnxrt.LibraryName)
	}
	return msg
}

// tensorRTError marks a TensorRT provider that cannot be used, after
// which NewORT falls back to CUDA.
type tensorRTError struct{ error }

func (e *tensorRTError) Unwrap() error { return e.error }

// MissingLibraryError is a provider that cannot load because the dynamic
// loader does not find a library it needs. It wraps ErrProviderUnavailable.
type MissingLibraryError struct {
	// Provider is "CUDA" or "TensorRT"; Library the missing file; Fix how
	// to get it.
	Provider, Library, Fix string
	err                    error
}

// Error implements error.
func (e *MissingLibraryError) Error() string {
	return fmt.Sprintf("%s: %s not found: %s", e.err.Error(), e.Library, e.Fix)
}

// Unwrap returns the provider error.
func (e *MissingLibraryError) Unwrap() error { return e.err }

// reason shortens an ONNX Runtime status message to its text, dropping the
// source location and codes in front ("<file>:<line> <function>
// [ONNXRuntimeError] : 1 : FAIL : <text>").
func reason(err error) string {
	msg := oneLine(err)
	const tag = "[ONNXRuntimeError] : "
	if i := strings.Index(msg, tag); i >= 0 {
		if parts := strings.SplitN(msg[i+len(tag):], " : ", 3); len(parts) == 3 {
			return parts[2]
		}
	}
	return msg
}

// sessionReason is why ONNX Runtime could not open a session of the model
// file path, without the file's path, which the caller's error names once:
// both the session's own error and ONNX Runtime's text name it again.
func sessionReason(err error, path string) string {
	msg := reason(err)
	msg = strings.TrimPrefix(msg, "open session "+path+": ")
	msg = strings.TrimPrefix(msg, "Load model from "+path+" failed:")
	return strings.TrimSpace(msg)
}

// oneLine folds a multi-line runtime error message into one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
