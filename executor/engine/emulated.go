package engine

import (
	"context"
	"fmt"
	"math"

	"go.uber.org/zap"
)

// EmulatedOptions configure the emulated engine.
type EmulatedOptions struct {
	// Sleeper waits out each batch's time; nil: RealSleeper.
	Sleeper Sleeper
	// DeviceName names the emulated device for Info.
	DeviceName string
	// Log receives load events; nil: none.
	Log *zap.Logger
	// Memory is the device's memory, shared with the other executors on
	// it: a load of a model that holds some (ModelSpec.MemoryMB) is
	// refused when too little is left. nil: loads hold none.
	Memory *DeviceMemory
	// Fault is a file whose presence faults the device, for the rest of
	// the process, as a kernel's illegal memory access faults a CUDA
	// context: every run fails from then on, and CheckDevice says why
	// (the file's text). It lets a fault be rehearsed end to end on an
	// emulated device. "": none.
	Fault string
}

// Emulated is the emulated engine: no model runs. A batch takes the time
// its model's Timing gives, on the Sleeper, and answers zero-filled outputs
// marked Emulated. It is safe for concurrent use.
type Emulated struct {
	opts  EmulatedOptions
	log   *zap.Logger
	fault *emulatedFault

	open openSet[*emuModel]
}

var _ Engine = (*Emulated)(nil)

// NewEmulated returns an emulated engine.
func NewEmulated(opts EmulatedOptions) *Emulated {
	if opts.Sleeper == nil {
		opts.Sleeper = RealSleeper{}
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	return &Emulated{opts: opts, log: opts.Log.Named("emulated"), fault: &emulatedFault{path: opts.Fault}}
}

// Info implements Engine.
func (e *Emulated) Info() Info {
	return Info{Kind: KindEmulated, Provider: KindEmulated, DeviceName: e.opts.DeviceName}
}

// Load implements Engine. spec needs Inputs, Outputs and Timing.Latency;
// Path is not read.
func (e *Emulated) Load(ctx context.Context, spec ModelSpec) (Loaded, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load model %s: %w: %w", spec.Name, ErrCancelled, context.Cause(ctx))
	}
	if spec.Timing.Latency == nil {
		return nil, fmt.Errorf("load model %s: %w: no latency function", spec.Name, ErrInvalidSpec)
	}
	contention := spec.Timing.Contention
	if contention == 0 {
		contention = 1
	}
	if contention < 0 || math.IsNaN(contention) || math.IsInf(contention, 0) {
		return nil, fmt.Errorf("load model %s: %w: contention %v", spec.Name, ErrInvalidSpec, spec.Timing.Contention)
	}
	j, err := newJitter(spec.Timing.Jitter)
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", spec.Name, err)
	}
	lay, err := newLayout(spec.Name, spec.MaxBatchSize, spec.Inputs, spec.Outputs)
	if err == nil {
		err = lay.setWarmupShapes(spec.WarmupShapes)
	}
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", spec.Name, err)
	}
	m := &emuModel{
		layout:     lay,
		engine:     e,
		sleeper:    e.opts.Sleeper,
		latency:    spec.Timing.Latency,
		contention: contention,
		jitter:     j,
	}
	if e.opts.Memory != nil && spec.MemoryMB > 0 {
		if m.memory, err = e.opts.Memory.Take(spec.Name, spec.MemoryMB); err != nil {
			return nil, fmt.Errorf("load model %s: %w", spec.Name, err)
		}
	}
	if err := e.open.add(m); err != nil {
		m.giveMemory()
		return nil, fmt.Errorf("load model %s: engine %w", spec.Name, err)
	}
	e.log.Info("loaded model", zap.String("model", spec.Name), zap.Int("max_batch_size", spec.MaxBatchSize),
		zap.Float64("contention", contention))
	return m, nil
}

// Close implements Engine: it closes every model still loaded.
func (e *Emulated) Close() error { return e.open.closeAll() }
