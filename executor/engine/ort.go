package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/internal/onnxfile"
)

// ORTOptions configure the onnxruntime engine.
type ORTOptions struct {
	// Provider is the execution provider: ProviderCPU (default),
	// ProviderCUDA or ProviderTensorRT.
	Provider string
	// DeviceID is the CUDA device ordinal for the GPU providers (within
	// CUDA_VISIBLE_DEVICES).
	DeviceID int
	// IntraOpThreads is the number of threads one run uses (the CPU
	// gpu-let's share of the cores); 0: one per CPU the process sees.
	IntraOpThreads int
	// DisableSpinning stops idle intra-op threads from spinning, which
	// frees the cores for co-located executors at some cost in latency.
	DisableSpinning bool
	// DeviceName, SMCount and MemoryBytes describe the device for Info, as
	// the executor found it; the engine does not probe the GPU itself.
	DeviceName  string
	SMCount     int
	MemoryBytes int64
	// ProviderDir holds the GPU provider libraries; empty: beside the core
	// library (make deps-gpu puts them there).
	ProviderDir string
	// MemoryLimit caps the GPU memory the CUDA provider's arena may take
	// (bytes; 0: no cap beyond the device's).
	MemoryLimit int64
	// ConvAlgoSearch is how the CUDA provider picks a convolution
	// algorithm for a new input shape: ConvSearchExhaustive (the
	// provider's default, used when empty), ConvSearchHeuristic or
	// ConvSearchDefault.
	ConvAlgoSearch string
	// FixedShapes runs every batch of a batching model at one of a few
	// sizes, padding it with zero rows, with one session per size
	// (shapeSessions): GPU providers set up a session anew each time the
	// input shape changes.
	FixedShapes bool
	// Log receives load and close events; nil: none.
	Log *zap.Logger
}

// ORT is the onnxruntime engine: one ONNX Runtime session per loaded model.
// It needs onnxrt.Init to have loaded the library. It is safe for
// concurrent use.
type ORT struct {
	opts ORTOptions
	log  *zap.Logger
	// fallback is why the provider asked for could not be used (TensorRT
	// that does not load, CUDA serving instead); nil otherwise.
	fallback error

	open openSet[*ortModel]
}

var _ Engine = (*ORT)(nil)

// NewORT returns an onnxruntime engine. It checks that the library has the
// execution provider asked for (ErrProviderUnavailable otherwise).
func NewORT(opts ORTOptions) (*ORT, error) {
	if _, ok := onnxrt.Library(); !ok {
		return nil, fmt.Errorf("new onnxruntime engine: %w: call onnxrt.Init first", onnxrt.ErrNotInitialized)
	}
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		return nil, fmt.Errorf("new onnxruntime engine: %w: tensors are little-endian and this host is not", ErrUnsupported)
	}
	if opts.Provider == "" {
		opts.Provider = ProviderCPU
	}
	if opts.IntraOpThreads < 0 {
		return nil, fmt.Errorf("new onnxruntime engine: %w: intra-op threads %d", ErrInvalidOptions, opts.IntraOpThreads)
	}
	if opts.IntraOpThreads == 0 {
		opts.IntraOpThreads = runtime.NumCPU()
	}
	if opts.MemoryLimit < 0 {
		return nil, fmt.Errorf("new onnxruntime engine: %w: memory limit %d", ErrInvalidOptions, opts.MemoryLimit)
	}
	if opts.DeviceID < 0 {
		return nil, fmt.Errorf("new onnxruntime engine: %w: device id %d", ErrInvalidOptions, opts.DeviceID)
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	so, err := opts.sessionOptions()
	var trtErr *tensorRTError
	var fallback error
	if errors.As(err, &trtErr) {
		fallback = trtErr.error
		// TensorRT is used where it loads; elsewhere CUDA serves alone.
		opts.Log.Warn("TensorRT cannot be used; serving with CUDA alone", zap.Error(err))
		opts.Provider = ProviderCUDA
		so, err = opts.sessionOptions()
		if err != nil {
			err = fmt.Errorf("%w (after %s)", err, fallbackNote(fallback))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("new onnxruntime engine: %w", err)
	}
	_ = so.Destroy()
	return &ORT{
		opts:     opts,
		log:      opts.Log.Named("ort").With(zap.String("provider", opts.Provider)),
		fallback: fallback,
	}, nil
}

// Fallback is why the provider asked for is not the one that runs (TensorRT
// that cannot be used, CUDA serving alone), with the missing library as a
// *MissingLibraryError where one is; nil when the provider asked for runs.
func (e *ORT) Fallback() error { return e.fallback }

// fallbackNote says why the provider differs from the one asked for; empty
// when it does not.
func fallbackNote(fallback error) string {
	if fallback == nil {
		return ""
	}
	return "tensorrt was asked for but " + fallback.Error()
}

// Info implements Engine.
func (e *ORT) Info() Info {
	return Info{
		Kind:        KindONNXRuntime,
		Provider:    e.opts.Provider,
		Version:     onnxrt.Version(),
		DeviceName:  e.opts.DeviceName,
		DeviceID:    e.opts.DeviceID,
		Threads:     e.opts.IntraOpThreads,
		SMCount:     e.opts.SMCount,
		MemoryBytes: e.opts.MemoryBytes,
		MemoryLimit: e.opts.MemoryLimit,
		Note:        fallbackNote(e.fallback),
	}
}

// platformONNX is ModelSpec.Platform of an ONNX file, the only one this
// engine runs.
const platformONNX = "onnxruntime"

// Load implements Engine: it reads the model's tensors, checks them against
// spec and opens a session. Errors name the model file.
func (e *ORT) Load(ctx context.Context, spec ModelSpec) (Loaded, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load model %s: %w: %w", spec.Name, ErrCancelled, context.Cause(ctx))
	}
	if spec.Path == "" {
		return nil, fmt.Errorf("load model %s: %w: no model file", spec.Name, ErrInvalidSpec)
	}
	if spec.Platform != "" && spec.Platform != platformONNX {
		return nil, fmt.Errorf("load model %s from %s: %w: a %s file, which ONNX Runtime cannot run; export the model to ONNX (torch.onnx.export) to serve it on the CPU or a GPU",
			spec.Name, spec.Path, ErrInvalidSpec, spec.Platform)
	}
	lay, err := ortLayout(spec)
	if err != nil {
		return nil, fmt.Errorf("load model %s from %s: %w", spec.Name, spec.Path, err)
	}
	so, err := e.opts.modelSessionOptions(spec)
	if err != nil {
		return nil, fmt.Errorf("load model %s from %s: %w", spec.Name, spec.Path, err)
	}
	defer func() { _ = so.Destroy() }()
	sess, err := onnxrt.NewSession(spec.Path, specNames(lay.inputs), specNames(lay.outputs), so)
	if err != nil {
		return nil, fmt.Errorf("load model %s from %s: %w: %s", spec.Name, spec.Path, ErrLoadFailed, onnxrt.WithOpHint(sessionReason(err, spec.Path), spec.OpLibraries))
	}
	m := &ortModel{layout: lay, engine: e, sess: sess}
	if e.opts.FixedShapes && lay.batched() && lay.maxBatch > 1 {
		names := [2][]string{specNames(lay.inputs), specNames(lay.outputs)}
		m.shapes = newShapeSessions(lay.maxBatch, sess, func() (*onnxrt.Session, error) {
			so, err := e.opts.modelSessionOptions(spec)
			if err != nil {
				return nil, err
			}
			defer func() { _ = so.Destroy() }()
			s, err := onnxrt.NewSession(spec.Path, names[0], names[1], so)
			if err != nil {
				return nil, fmt.Errorf("%w: %s", ErrLoadFailed, onnxrt.WithOpHint(sessionReason(err, spec.Path), spec.OpLibraries))
			}
			return s, nil
		})
	}

	if err := e.open.add(m); err != nil {
		sess.Close()
		return nil, fmt.Errorf("load model %s: engine %w", spec.Name, err)
	}
	e.log.Info("loaded model", zap.String("model", spec.Name), zap.String("path", spec.Path),
		zap.Int("max_batch_size", spec.MaxBatchSize), zap.Duration("took", time.Since(start)))
	return m, nil
}

// ortLayout reads the model file's tensors, makes them per request and
// narrows them with the configured specs.
func ortLayout(spec ModelSpec) (*layout, error) {
	info, err := modelInterface(spec.Path)
	if err != nil {
		return nil, err
	}
	batched := spec.MaxBatchSize > 0
	convert := func(kind string, infos []onnxrt.TensorInfo, configured []TensorSpec) ([]TensorSpec, error) {
		model := make([]TensorSpec, len(infos))
		for i, in := range infos {
			model[i] = TensorSpec{Name: in.Name, DataType: in.DataType, Shape: slices.Clone(in.Shape)}
		}
		specs, err := perRequest(kind, model, batched)
		if err != nil {
			return nil, err
		}
		if err := checkSpecs(kind, configured); err != nil {
			return nil, err
		}
		return narrow(kind, specs, configured)
	}
	inputs, err := convert("input", info.Inputs, spec.Inputs)
	if err != nil {
		return nil, err
	}
	outputs, err := convert("output", info.Outputs, spec.Outputs)
	if err != nil {
		return nil, err
	}
	l, err := newLayout(spec.Name, spec.MaxBatchSize, inputs, outputs)
	if err != nil {
		return nil, err
	}
	return l, l.setWarmupShapes(spec.WarmupShapes)
}

// Close implements Engine: it closes every model still loaded.
func (e *ORT) Close() error { return e.open.closeAll() }

// modelInterface reads a model file's inputs and outputs from the file
// alone (onnxfile), so that a load reads the weights once, in the session
// that serves: a session opened only to list them (ONNX Runtime's way) took
// as long again and left its allocations in the executor's peak. A file the
// reader cannot read goes to ONNX Runtime, whose answer (or reason) stands.
func modelInterface(path string) (onnxrt.ModelInfo, error) {
	ins, outs, err := onnxfile.ReadInterface(path)
	if err != nil {
		return onnxrt.ReadModelInfo(path)
	}
	return onnxrt.ModelInfo{Inputs: ins, Outputs: outs}, nil
}
