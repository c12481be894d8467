package engine

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// ErrEmulatedFault is the fault of an emulated device (EmulatedOptions.Fault):
// its runs fail, and CheckDevice reports it, as a CUDA context's fault does.
var ErrEmulatedFault = errors.New("emulated device fault")

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
	f.found = fmt.Errorf("%w: %s", ErrEmulatedFault, why)
	return f.found
}

// CheckDevice reports the emulated device's fault (EmulatedOptions.Fault):
// nil when it runs. The executor asks it as it asks a CUDA context.
func (e *Emulated) CheckDevice() error { return e.fault.check() }
