package mps

import "errors"

// Sentinel errors; match them with errors.Is.
var (
	// ErrNoNVIDIA: NVIDIA devices were demanded but NVML found none (no
	// driver, no libnvidia-ml.so.1, Init failed, or zero GPUs).
	ErrNoNVIDIA = errors.New("no NVIDIA GPU available")
	// ErrInvalidSpec: the device specification is wrong; the message names
	// the field and the value.
	ErrInvalidSpec = errors.New("invalid device specification")
	// ErrUnknownDevice: no device has that id.
	ErrUnknownDevice = errors.New("unknown device")
	// ErrBadGpulet: the gpu-let does not fit its device (size, backend,
	// instance or cores).
	ErrBadGpulet = errors.New("gpu-let does not fit its device")
	// ErrMPSClientLimit: the GPU already has as many MPS clients as MPS allows.
	ErrMPSClientLimit = errors.New("MPS client limit reached")
	// ErrMPSDaemon: the MPS control daemon could not be started, reached or stopped.
	ErrMPSDaemon = errors.New("MPS control daemon failed")
	// ErrPipeDir: the MPS pipe or log directory cannot be used.
	ErrPipeDir = errors.New("MPS directory not usable")
	// ErrMIGNotEnabled: the GPU is not in MIG mode (or a mode change is pending).
	ErrMIGNotEnabled = errors.New("MIG mode not enabled")
	// ErrMIGInUse: an instance that would have to be destroyed has running processes.
	ErrMIGInUse = errors.New("MIG instance in use")
	// ErrMIGLayout: the hardware cannot make the requested MIG layout.
	ErrMIGLayout = errors.New("MIG layout cannot be made")
	// ErrNVML: an NVML call failed (its nvml.Return is wrapped too).
	ErrNVML = errors.New("NVML call failed")
	// ErrClosed: the manager has been closed.
	ErrClosed = errors.New("device manager closed")
)
