package profiler

import "errors"

// Sentinel errors of a profiling job; match them with errors.Is. Every one
// comes wrapped in a message that names the model, the device and, where it
// applies, the operating point.
var (
	// ErrBadJob: the job is incomplete or contradicts itself (no model, no
	// store, a batch the model cannot take).
	ErrBadJob = errors.New("invalid profiling job")
	// ErrSizeNotAllowed: a partition size the device does not make.
	ErrSizeNotAllowed = errors.New("partition size not allowed on this device")
	// ErrModelLoad: the executor could not load or run the model.
	ErrModelLoad = errors.New("model failed to load")
	// ErrDeviceLost: the executor process died or its device went away
	// while the job ran.
	ErrDeviceLost = errors.New("device lost during profiling")
	// ErrInterrupted: the job's context ended before it finished; what was
	// measured is kept.
	ErrInterrupted = errors.New("profiling interrupted")
	// ErrNoEmulation: an emulated device's reference set cannot answer for
	// this model (no curve of that name, no co-location data).
	ErrNoEmulation = errors.New("no emulated physics for this model")
	// ErrUtilisation: a utilisation meter failed or could not read its tool's
	// output.
	ErrUtilisation = errors.New("utilisation measurement failed")
)
