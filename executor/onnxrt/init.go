package onnxrt

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

var (
	// ErrLibraryLoad is returned when the library exists but does not load
	// as ONNX Runtime.
	ErrLibraryLoad = errors.New("onnxruntime library does not load")
	// ErrAlreadyInitialized is returned by Init with a library other than
	// the one already loaded in this process.
	ErrAlreadyInitialized = errors.New("onnxruntime already initialized with another library")
	// ErrNotInitialized is returned by functions that need Init first.
	ErrNotInitialized = errors.New("onnxruntime not initialized")
)

// env is the process-wide ONNX Runtime environment's state.
var env struct {
	mu   sync.Mutex
	path string // library loaded; "" until Init succeeds
}

// Init loads the ONNX Runtime library at path and creates the process-wide
// environment. The first successful call does the work; later calls with
// the same path return nil and calls with another path return
// ErrAlreadyInitialized. A failed call leaves nothing initialized, so Init
// may be called again. Init is safe for concurrent use.
func Init(path string) error {
	if path == "" {
		return fmt.Errorf("init onnxruntime: %w: empty library path", ErrLibraryNotFound)
	}
	abs, err := explicit(path, "library")
	if err != nil {
		return fmt.Errorf("init onnxruntime: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	env.mu.Lock()
	defer env.mu.Unlock()
	if env.path != "" {
		if env.path == abs {
			return nil
		}
		return fmt.Errorf("init onnxruntime with %s: %w (%s)", abs, ErrAlreadyInitialized, env.path)
	}
	ort.SetSharedLibraryPath(abs)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("init onnxruntime: %w %q: %s", ErrLibraryLoad, abs, loadReason(err, abs))
	}
	if err := epInit(abs); err != nil {
		_ = ort.DestroyEnvironment()
		return fmt.Errorf("init onnxruntime: %w %q: plugin execution provider API: %s", ErrLibraryLoad, abs, err)
	}
	env.path = abs
	return nil
}

// Library returns the path of the library Init loaded, and whether it has.
func Library() (string, bool) {
	env.mu.Lock()
	defer env.mu.Unlock()
	return env.path, env.path != ""
}

// Version returns the loaded ONNX Runtime's version, e.g. "1.24.3", or ""
// before Init.
func Version() string {
	if _, ok := Library(); !ok {
		return ""
	}
	return ort.GetVersion()
}

// initialized returns ErrNotInitialized, wrapped for op, until Init succeeds.
func initialized(op string) error {
	if _, ok := Library(); !ok {
		return fmt.Errorf("%s: %w: call onnxrt.Init first", op, ErrNotInitialized)
	}
	return nil
}

// loadReason shortens onnxruntime_go's load error, which repeats the path
// (`… shared library "<path>": <path>: <dlerror>`), to the loader's reason.
func loadReason(err error, path string) string {
	msg := oneLine(err)
	if _, after, ok := strings.Cut(msg, `"`+path+`": `); ok {
		msg = strings.TrimPrefix(after, path+": ")
	}
	return msg
}

// oneLine folds a multi-line error message into one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
