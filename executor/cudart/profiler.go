package cudart

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef int (*profiler_fn_t)(void);
typedef const char* (*prof_err_str_t)(int);

// gpl_cuda_profiler calls cudaProfilerStart (start != 0) or cudaProfilerStop
// of the CUDA runtime library lib. It returns NULL or an error message to
// free.
static char* gpl_cuda_profiler(const char* lib, int start) {
	void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL) h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char* e = dlerror();
		return strdup(e ? e : "dlopen failed");
	}
	profiler_fn_t fn = (profiler_fn_t)dlsym(h, start ? "cudaProfilerStart" : "cudaProfilerStop");
	prof_err_str_t err_str = (prof_err_str_t)dlsym(h, "cudaGetErrorString");
	if (!fn || !err_str) {
		dlclose(h);
		return strdup("the library lacks cudaProfilerStart, cudaProfilerStop or cudaGetErrorString");
	}
	int rc = fn();
	char* msg = rc == 0 ? NULL : strdup(err_str(rc));
	dlclose(h);
	return msg;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// ProfilerStart opens the range a profiler started with
// `--profile-from-start off` (Nsight Compute, Nsight Systems) collects,
// through the CUDA runtime library lib (Library when empty). Call it after
// the work the profile should leave out, such as a model's warm-up.
func ProfilerStart(lib string) error { return profiler(lib, true) }

// ProfilerStop closes the range ProfilerStart opened.
func ProfilerStop(lib string) error { return profiler(lib, false) }

func profiler(lib string, start bool) error {
	if lib == "" {
		lib = Library
	}
	cl := C.CString(lib)
	defer C.free(unsafe.Pointer(cl))
	on := C.int(0)
	verb := "stop"
	if start {
		on, verb = 1, "start"
	}
	if msg := C.gpl_cuda_profiler(cl, on); msg != nil {
		defer C.free(unsafe.Pointer(msg))
		return fmt.Errorf("%s CUDA profiler: %s", verb, C.GoString(msg))
	}
	return nil
}
