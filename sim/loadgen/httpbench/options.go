package httpbench

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Devices the daemon can be started on.
const (
	DeviceAuto     = "auto"     // cpu when the model can be profiled there, else emulated
	DeviceCPU      = "cpu"      // the CPU, after profiling the model on it
	DeviceEmulated = "emulated" // one emulated V100 (igniter-v100)
)

// ErrOptions is wrapped by every error about Options.
var ErrOptions = errors.New("bad http bench options")

// Options configure a run.
type Options struct {
	// Exe is the gpuletd binary to run as `serve` and `profile`.
	Exe string
	// Environ is the environment the daemon starts from; its GPULETD_
	// settings are dropped.
	Environ []string
	// ONNXRuntimeLibrary is passed to the daemon.
	ONNXRuntimeLibrary string
	// Model is the model to serve; Repository writes a repository holding
	// it (with its config.yaml) into a directory.
	Model      string
	Repository func(dir string) error
	// SLO replaces the model's SLO in its config.yaml; 0 keeps it.
	SLO time.Duration
	// Device is DeviceAuto, DeviceCPU or DeviceEmulated.
	Device string
	// Policy is the daemon's batch scheduling policy.
	Policy string
	// Rate is the request rate; 0 searches one (SearchRate) up to MaxRate.
	Rate, MaxRate float64
	// Duration is the measured time of each server, Probe that of each
	// step of the search and of the refusal measurement; Warmup comes
	// before each, unrecorded.
	Duration, Probe, Warmup time.Duration
	// Binary sends binary tensors instead of JSON.
	Binary bool
	// GRPC measures the gRPC path instead (raw tensors, the daemon's
	// grpc_listen against a bare gRPC echo).
	GRPC bool
	// InProcessEcho runs the bare server inside the bench's own process
	// instead of as a process of its own (see echoproc.go): how releases
	// before 2026-11-26 measured, kept to compare with them.
	InProcessEcho bool
	// Concurrency bounds the requests in flight.
	Concurrency int
	// Seed draws the arrivals and the inputs.
	Seed uint64
	// ProfileTimeout bounds `gpuletd profile`; ReadyTimeout the wait for
	// the daemon to serve the model.
	ProfileTimeout, ReadyTimeout time.Duration
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
}

func (o *Options) check() error {
	switch o.Device {
	case DeviceAuto, DeviceCPU, DeviceEmulated:
	default:
		return fmt.Errorf("%w: device %q: use %s, %s or %s", ErrOptions, o.Device, DeviceAuto, DeviceCPU, DeviceEmulated)
	}
	switch {
	case o.Exe == "" || o.Model == "" || o.Repository == nil:
		return fmt.Errorf("%w: the binary, the model and its repository are needed", ErrOptions)
	case o.Rate < 0 || o.MaxRate <= 0 || o.Duration <= 0 || o.Probe <= 0 || o.Warmup < 0 || o.Concurrency <= 0 || o.SLO < 0:
		return fmt.Errorf("%w: rates, durations and concurrency must be positive", ErrOptions)
	case o.ProfileTimeout <= 0 || o.ReadyTimeout <= 0:
		return fmt.Errorf("%w: timeouts must be positive", ErrOptions)
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return nil
}
