package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/executor/cudart"
	"github.com/gpulet/gpuletd/executor/engine"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/mps/execenv"
	"go.uber.org/zap"
)

// ProcessOptions are the flags of gpuletd executor. The gpu-let itself is
// described by the environment the daemon sets (mps/execenv).
type ProcessOptions struct {
	Socket   string
	Policy   string
	MaxQueue int
	// Provider is the onnxruntime execution provider on NVIDIA gpu-lets:
	// cuda or tensorrt.
	Provider string
	// Library is the ONNX Runtime library; empty: onnxrt.FindLibrary.
	Library string
	// Expendable marks an executor that only measures (a profile job's):
	// the kernel's out-of-memory killer takes it before any that serves.
	Expendable bool
	// HangFloor is Options.HangFloor; 0: DefaultHangFloorCPU on the CPU,
	// DefaultHangFloor on GPUs, real or emulated.
	HangFloor time.Duration
	Log       *zap.Logger
}

// RunProcess is the executor process: it reads its gpu-let from the
// environment, offers itself to the kernel's out-of-memory killer before
// the daemon, pins itself to its cores on the CPU, starts the engine and
// serves on the socket until ctx ends.
func RunProcess(ctx context.Context, o ProcessOptions) error {
	if o.Socket == "" {
		return errors.New("executor: --socket is required")
	}
	env, err := execenv.Decode(os.LookupEnv)
	if err != nil {
		return fmt.Errorf("executor: %w", err)
	}
	log := o.Log.With(zap.String("device", env.DeviceID), zap.Int("size", env.Size))
	raise := oomScoreRaise
	if o.Expendable {
		raise = oomScoreRaiseExpendable
	}
	if _, err := volunteerForOOM(oomScoreAdjPath, raise); err != nil {
		log.Warn("the kernel's out-of-memory killer may choose the daemon before this executor", zap.Error(err))
	}
	policy, err := sched.ParsePolicy(firstNonEmpty(o.Policy, "deferred"))
	if err != nil {
		return fmt.Errorf("executor: %w", err)
	}
	eng, err := newEngine(env, o, log)
	if err != nil {
		return fmt.Errorf("executor: %w", err)
	}
	running, err := CreateRunningFile(RunningFilePath(o.Socket))
	if err != nil {
		log.Warn("a request that crashes this executor will not be told from the others of its batch", zap.Error(err))
	}
	// Kept after a fault, whose hung run it names: the daemon reads it
	// once the process has ended, then removes it.
	keepRunning := false
	defer func() {
		if !keepRunning {
			_ = running.Close(RunningFilePath(o.Socket))
		}
	}()
	srv, err := NewServer(Options{
		Runtime: &EngineRuntime{Engine: eng}, Policy: policy, MaxQueue: o.MaxQueue, Log: log, Running: running, HangFloor: HangFloor(o.HangFloor, env.Kind),
		Device:       DeviceInfo{Kind: env.Kind, Name: firstNonEmpty(env.Type, env.DeviceID), Size: env.Size, Cores: env.Cores},
		OneRunThread: env.Kind == execenv.KindNVIDIA, // the CUDA provider's state per thread
		DeviceCheck:  deviceCheck(env.Kind, eng, log),
	})
	if err != nil {
		_ = eng.Close()
		return fmt.Errorf("executor: %w", err)
	}
	ln, err := ListenUnix(o.Socket)
	if err != nil {
		_ = srv.Close()
		return fmt.Errorf("executor: %w", err)
	}
	log.Info("executor serving", zap.String("socket", o.Socket), zap.String("engine", eng.Info().Kind),
		zap.String("policy", policy.String()), zap.Ints("cores", env.Cores))
	serveErr := srv.Serve(ctx, ln)
	if errors.Is(serveErr, ErrDeviceFault) {
		keepRunning = true
		// The process ends now: the models' sessions are not closed, as
		// releasing them would call into the failed context, and a
		// runtime that aborts there would hide the exit status that says
		// why the process ended.
		_ = os.Remove(o.Socket)
		return serveErr
	}
	closeErr := srv.Close()
	_ = os.Remove(o.Socket)
	return errors.Join(serveErr, closeErr)
}

// EmulatedFaultFile is the name of an emulated device's fault file, in the
// folder of its executors' sockets (engine.EmulatedOptions.Fault).
func EmulatedFaultFile(deviceID string) string { return "fault-" + deviceID }

// EmulatedMemoryFile is the name of the file, in the executors' socket
// folder, that lists what the loads on an emulated device hold
// (engine.DeviceMemory).
func EmulatedMemoryFile(deviceID string) string { return "memory-" + deviceID }

// deviceCheck is the executor's Options.DeviceCheck for a device of kind:
// on NVIDIA GPUs, whether the process's CUDA context holds an error for
// good (cudart.CheckContext); on emulated ones, the emulated fault
// (engine.Emulated.CheckDevice); none on the CPU. A CUDA check that cannot
// be made (the runtime library lacks a call) counts as no fault, said once.
func deviceCheck(kind string, eng engine.Engine, log *zap.Logger) func() error {
	if emu, ok := eng.(*engine.Emulated); ok {
		return emu.CheckDevice
	}
	if kind != execenv.KindNVIDIA {
		return nil
	}
	var said sync.Once
	return func() error {
		err := cudart.CheckContext("")
		if ce, ok := errors.AsType[*cudart.ContextError](err); ok {
			return ce
		}
		if err != nil {
			said.Do(func() {
				log.Warn("the CUDA context cannot be checked: a context that failed for good would not be found", zap.Error(err))
			})
		}
		return nil
	}
}

// newEngine picks the engine the gpu-let needs: emulated on emulated
// devices, onnxruntime (CPU provider, pinned to the gpu-let's cores) on the
// CPU, onnxruntime with a GPU provider on NVIDIA GPUs.
func newEngine(env execenv.Env, o ProcessOptions, log *zap.Logger) (engine.Engine, error) {
	if env.Kind == execenv.KindEmulated {
		// The executors of one daemon share their sockets' folder: the
		// device's fault file is there, beside its memory.
		opts := engine.EmulatedOptions{DeviceName: env.Emulated, Log: log,
			Fault: filepath.Join(filepath.Dir(o.Socket), EmulatedFaultFile(env.DeviceID))}
		if env.MemoryMB > 0 && env.DeviceID != "" {
			opts.Memory = &engine.DeviceMemory{Path: filepath.Join(filepath.Dir(o.Socket), EmulatedMemoryFile(env.DeviceID)),
				Device: env.DeviceID, TotalMB: float64(env.MemoryMB)}
		}
		return engine.NewEmulated(opts), nil
	}
	lib, err := onnxrt.FindLibrary(o.Library)
	if err != nil {
		return nil, err
	}
	opts := engine.ORTOptions{DeviceName: firstNonEmpty(env.Type, env.DeviceID), Log: log}
	switch env.Kind {
	case execenv.KindCPU:
		// Pin before ONNX Runtime starts its threads: they inherit the mask.
		if err := env.ApplyCPU(); err != nil {
			return nil, err
		}
		opts.Provider = engine.ProviderCPU
		opts.IntraOpThreads = env.IntraOpThreads
	case execenv.KindNVIDIA:
		opts.Provider = firstNonEmpty(o.Provider, engine.ProviderCUDA)
		opts.MemoryLimit = int64(env.MemoryLimitMB) << 20
		// The GPU runs the graph; the CPU only launches kernels and runs
		// the odd shape node. One thread that sleeps when idle leaves the
		// host's cores to the daemon and the other executors, whose
		// requests a pool of spinning threads per session would delay.
		opts.IntraOpThreads = 1
		opts.DisableSpinning = true
		// Batches of a few fixed sizes, each on its own session: a CUDA
		// session redoes its set-up whenever the batch size changes.
		opts.FixedShapes = true
	}
	if err := onnxrt.Init(lib); err != nil {
		return nil, err
	}
	if env.Kind == execenv.KindNVIDIA {
		// What this process's CUDA context got: the SMs an MPS percentage
		// or a MIG instance leaves, and the memory it sees.
		dev, err := cudart.Query("")
		if err != nil {
			log.Warn("cannot ask the CUDA runtime about the device", zap.Error(err))
		} else {
			opts.SMCount, opts.MemoryBytes = dev.SMCount, dev.MemoryTotal
			log.Info("CUDA device", zap.Int("sm_count", dev.SMCount), zap.Int64("memory_bytes", dev.MemoryTotal),
				zap.Int64("memory_free_bytes", dev.MemoryFree), zap.Int("visible", dev.Visible))
		}
	}
	return engine.NewORT(opts)
}

// HangFloor is the hang floor an executor of kind (execenv's) runs with:
// floor when given (scheduler.hang_timeout), else DefaultHangFloorCPU on
// the CPU, whose runs tune nothing on their first batch of a size, and
// DefaultHangFloor on GPUs (an emulated one stands for a GPU).
func HangFloor(floor time.Duration, kind string) time.Duration {
	switch {
	case floor > 0:
		return floor
	case kind == execenv.KindCPU:
		return DefaultHangFloorCPU
	}
	return DefaultHangFloor
}
