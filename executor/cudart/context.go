package cudart

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef int (*ctx_last_error_t)(void);
typedef int (*ctx_sync_t)(void);
typedef const char* (*ctx_err_str_t)(int);

// gpl_cuda_context_error clears the runtime's last error on this thread,
// which a call that failed on its own leaves, then waits for the device's
// work to end. It returns 0 when that works, else the CUDA error code with
// its name and description in name and text (to free); -1 with why in text
// (to free) when the library cannot be asked.
static int gpl_cuda_context_error(const char* lib, char** name, char** text) {
	*name = NULL;
	*text = NULL;
	void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL) h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char* e = dlerror();
		*text = strdup(e ? e : "dlopen failed");
		return -1;
	}
	ctx_last_error_t last = (ctx_last_error_t)dlsym(h, "cudaGetLastError");
	ctx_sync_t sync = (ctx_sync_t)dlsym(h, "cudaDeviceSynchronize");
	ctx_err_str_t err_name = (ctx_err_str_t)dlsym(h, "cudaGetErrorName");
	ctx_err_str_t err_str = (ctx_err_str_t)dlsym(h, "cudaGetErrorString");
	if (!last || !sync || !err_name || !err_str) {
		dlclose(h);
		*text = strdup("the library lacks cudaGetLastError, cudaDeviceSynchronize, cudaGetErrorName or cudaGetErrorString");
		return -1;
	}
	last();
	int rc = sync();
	if (rc != 0) {
		const char* n = err_name(rc);
		const char* t = err_str(rc);
		*name = strdup(n ? n : "cudaError");
		*text = strdup(t ? t : "unknown error");
	}
	dlclose(h);
	return rc;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// ContextError is a CUDA error that the process's context of its device
// holds for good (an illegal memory access, a kernel's failed assert, a
// hardware error, a client the MPS server dropped): every later call fails
// with it, and only a new process can use the device again.
type ContextError struct {
	// Code is the CUDA runtime's error code, Name its name
	// (cudaErrorIllegalAddress) and Text its description.
	Code       int
	Name, Text string
}

// Error names the error and its code, then says what it is.
func (e *ContextError) Error() string {
	return fmt.Sprintf("%s (CUDA error %d): %s", e.Name, e.Code, e.Text)
}

// CheckContext asks the CUDA runtime library lib (Library when empty)
// whether this process's context of its device can still run work: nil
// when it can, a *ContextError when it holds an error for good. It first
// clears the error a call that failed on its own leaves (such an error is
// reported once), then waits for the device's work to end: an error that
// comes back there is the context's. Call it after a run failed, on a
// process that uses the device; it waits for every stream of the process.
func CheckContext(lib string) error {
	if lib == "" {
		lib = Library
	}
	cl := C.CString(lib)
	defer C.free(unsafe.Pointer(cl))
	var name, text *C.char
	rc := C.gpl_cuda_context_error(cl, &name, &text)
	defer C.free(unsafe.Pointer(name))
	defer C.free(unsafe.Pointer(text))
	switch {
	case rc == 0:
		return nil
	case rc < 0:
		return fmt.Errorf("check CUDA context: %w", errors.New(C.GoString(text)))
	}
	return &ContextError{Code: int(rc), Name: C.GoString(name), Text: C.GoString(text)}
}
