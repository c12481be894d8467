package onnxrt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

const (
	// LibraryName is the file name of ONNX Runtime's shared library.
	LibraryName = "libonnxruntime.so.1"
	// EnvLibrary is the environment variable that names the library when
	// the configuration does not.
	EnvLibrary = "GPULETD_ONNXRUNTIME_LIBRARY"
)

// ErrLibraryNotFound is returned when no ONNX Runtime library is found, or a
// configured one does not exist.
var ErrLibraryNotFound = errors.New("onnxruntime library not found")

// FindLibrary returns the absolute path of the ONNX Runtime library. It
// looks, in order, at configured (the onnxruntime.library setting), the
// GPULETD_ONNXRUNTIME_LIBRARY variable, next to the executable
// (<exe dir>/../lib/gpuletd/, <exe dir>/../.deps/onnxruntime/, <exe dir>/)
// and in .deps/onnxruntime/ of the working directory or any parent (dev
// checkouts and tests). A path given by the configuration or the variable
// must exist: it is not silently passed over.
func FindLibrary(configured string) (string, error) {
	f := finder{configured: configured, env: os.Getenv(EnvLibrary)}
	if exe, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		f.exeDir = filepath.Dir(exe)
	}
	if wd, err := os.Getwd(); err == nil {
		f.workDir = wd
	}
	return f.find()
}

// finder holds FindLibrary's inputs so tests can set them.
type finder struct {
	configured string
	env        string
	exeDir     string
	workDir    string
}

func (f finder) find() (string, error) {
	if f.configured != "" {
		return explicit(f.configured, "onnxruntime.library")
	}
	if f.env != "" {
		return explicit(f.env, EnvLibrary)
	}
	if f.exeDir != "" {
		for _, p := range []string{
			filepath.Join(f.exeDir, "..", "lib", "gpuletd", LibraryName),
			filepath.Join(f.exeDir, "..", ".deps", "onnxruntime", LibraryName),
			filepath.Join(f.exeDir, LibraryName),
		} {
			if isFile(p) {
				return filepath.Abs(p)
			}
		}
	}
	if f.workDir != "" {
		for dir := f.workDir; ; {
			p := filepath.Join(dir, ".deps", "onnxruntime", LibraryName)
			if isFile(p) {
				return filepath.Abs(p)
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf(`%w: run "make deps" or set onnxruntime.library (%s) to %s`,
		ErrLibraryNotFound, EnvLibrary, LibraryName)
}

// explicit checks a path the user named; source says where it was named.
func explicit(path, source string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%w: %s %q: %w", ErrLibraryNotFound, source, path, err)
	}
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: %s %q does not exist", ErrLibraryNotFound, source, path)
	case st.IsDir():
		return "", fmt.Errorf("%w: %s %q is a directory, not %s", ErrLibraryNotFound, source, path, LibraryName)
	}
	return abs, nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
