package engine

import (
	"fmt"
	"strconv"
	"strings"

	ort "github.com/yalue/onnxruntime_go"
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
		return appendCUDA(opts, o.DeviceID)
	case ProviderTensorRT:
		if err := appendTensorRT(opts, o.DeviceID); err != nil {
			return err
		}
		// Nodes TensorRT cannot take fall back to CUDA, then to the CPU.
		return appendCUDA(opts, o.DeviceID)
	}
	return fmt.Errorf("%w: unknown execution provider %q (have %v)", ErrProviderUnavailable, o.Provider, Providers())
}

func appendCUDA(opts *ort.SessionOptions, device int) error {
	cuda, err := ort.NewCUDAProviderOptions()
	if err != nil {
		return providerErr("CUDA", err)
	}
	defer func() { _ = cuda.Destroy() }()
	if err := cuda.Update(map[string]string{"device_id": strconv.Itoa(device)}); err != nil {
		return providerErr("CUDA", err)
	}
	if err := opts.AppendExecutionProviderCUDA(cuda); err != nil {
		return providerErr("CUDA", err)
	}
	return nil
}

func appendTensorRT(opts *ort.SessionOptions, device int) error {
	trt, err := ort.NewTensorRTProviderOptions()
	if err != nil {
		return providerErr("TensorRT", err)
	}
	defer func() { _ = trt.Destroy() }()
	if err := trt.Update(map[string]string{"device_id": strconv.Itoa(device)}); err != nil {
		return providerErr("TensorRT", err)
	}
	if err := opts.AppendExecutionProviderTensorRT(trt); err != nil {
		return providerErr("TensorRT", err)
	}
	return nil
}

// providerErr says that the loaded library cannot give the provider, with
// ONNX Runtime's reason.
func providerErr(provider string, err error) error {
	return fmt.Errorf("%w: the onnxruntime library does not provide %s (a CPU-only build?): %s",
		ErrProviderUnavailable, provider, reason(err))
}

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

// oneLine folds a multi-line runtime error message into one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
