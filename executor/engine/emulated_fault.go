package engine

import (
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/gpulet/gpuletd/executor/cudart"
)

// ErrEmulatedFault is the fault of an emulated device (EmulatedOptions.Fault):
// its runs fail, and CheckDevice reports it, as a CUDA context's fault does.
var ErrEmulatedFault = errors.New("emulated device fault")

// EmulatedFault is an emulated device's fault, as its fault file says it:
// ErrEmulatedFault, why, and the CUDA error code the text names as a CUDA
// context's error does ("cudaErrorIllegalAddress (CUDA error 700): …"), 0
// where it names none.
type EmulatedFault struct {
	Code int
	Why  string
}

// Error says the fault.
func (f *EmulatedFault) Error() string { return ErrEmulatedFault.Error() + ": " + f.Why }

// Unwrap is ErrEmulatedFault.
func (f *EmulatedFault) Unwrap() error { return ErrEmulatedFault }

// KernelFault says whether the CUDA error the fault names is one a run's
// own kernel raises (cudart.KernelFault), as a CUDA context's fault says.
func (f *EmulatedFault) KernelFault() bool { return cudart.KernelFault(f.Code) }

// cudaErrorCode finds "(CUDA error N)" in a fault's text.
var cudaErrorCode = regexp.MustCompile(`\(CUDA error ([0-9]+)\)`)

// emulatedFault is an emulated device's fault file and the fault it found
// there: once found, it holds for the process's life, as a CUDA context's
// does, whatever becomes of the file.
type emulatedFault struct {
	path string

	mu    sync.Mutex
	found error
}

// check reads the fault file: nil while there is none, else the fault,
// then and from then on.
func (f *emulatedFault) check() error {
	if f == nil || f.path == "" {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.found != nil {
		return f.found
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return nil // none (or none readable): the device runs
	}
	why := strings.TrimSpace(string(b))
	if why == "" {
		why = "the device faulted"
	}
	fault := &EmulatedFault{Why: why}
	if m := cudaErrorCode.FindStringSubmatch(why); m != nil {
		fault.Code, _ = strconv.Atoi(m[1])
	}
	f.found = fault
	return f.found
}

// CheckDevice reports the emulated device's fault (EmulatedOptions.Fault):
// nil when it runs. The executor asks it as it asks a CUDA context.
func (e *Emulated) CheckDevice() error { return e.fault.check() }
