//go:build gpu

package engine

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A kernel that stores to address 0: the device faults (an illegal
// address), and the process's CUDA context holds the error for good.
static const char gpl_fault_ptx[] =
	".version 6.0\n"
	".target sm_50\n"
	".address_size 64\n"
	".visible .entry gpuletd_fault()\n"
	"{\n"
	"	.reg .b64 %rd<2>;\n"
	"	.reg .b32 %r<2>;\n"
	"	mov.u64 %rd1, 0;\n"
	"	mov.u32 %r1, 1;\n"
	"	st.global.u32 [%rd1], %r1;\n"
	"	ret;\n"
	"}\n";

typedef int (*gpl_rt_free_t)(void*);
typedef int (*gpl_mod_load_t)(void**, const void*);
typedef int (*gpl_get_fn_t)(void**, void*, const char*);
typedef int (*gpl_launch_t)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**);
typedef int (*gpl_ctx_sync_t)(void);

// gpl_inject_fault runs that kernel in the CUDA runtime's primary context
// of device 0 (made current on this thread by cudaFree(0) of the runtime
// library rtlib) through the driver API. It returns NULL or an error
// message to free; the kernel's own fault is not an error here.
static char* gpl_inject_fault(const char* rtlib) {
	void* rt = dlopen(rtlib, RTLD_NOW | RTLD_NOLOAD);
	if (rt == NULL) rt = dlopen(rtlib, RTLD_NOW);
	void* drv = dlopen("libcuda.so.1", RTLD_NOW);
	if (rt == NULL || drv == NULL) {
		const char* e = dlerror();
		return strdup(e ? e : "dlopen failed");
	}
	gpl_rt_free_t rt_free = (gpl_rt_free_t)dlsym(rt, "cudaFree");
	gpl_mod_load_t mod_load = (gpl_mod_load_t)dlsym(drv, "cuModuleLoadData");
	gpl_get_fn_t get_fn = (gpl_get_fn_t)dlsym(drv, "cuModuleGetFunction");
	gpl_launch_t launch = (gpl_launch_t)dlsym(drv, "cuLaunchKernel");
	gpl_ctx_sync_t ctx_sync = (gpl_ctx_sync_t)dlsym(drv, "cuCtxSynchronize");
	if (!rt_free || !mod_load || !get_fn || !launch || !ctx_sync) return strdup("a CUDA call is missing");
	char msg[128];
	int rc = rt_free(NULL);
	if (rc != 0) { snprintf(msg, sizeof msg, "cudaFree(0): error %d", rc); return strdup(msg); }
	void* mod = NULL;
	void* fn = NULL;
	rc = mod_load(&mod, gpl_fault_ptx);
	if (rc == 0) rc = get_fn(&fn, mod, "gpuletd_fault");
	if (rc == 0) rc = launch(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	if (rc != 0) { snprintf(msg, sizeof msg, "load or launch the faulting kernel: error %d", rc); return strdup(msg); }
	ctx_sync();
	return NULL;
}
*/
import "C"

import (
	"errors"
	"unsafe"
)

// injectDeviceFault makes the device fault in this process's CUDA context,
// through the CUDA runtime library lib, for tests of what finds a context
// that failed for good (cudart.CheckContext). Built only with the gpu tag.
func injectDeviceFault(lib string) error {
	cl := C.CString(lib)
	defer C.free(unsafe.Pointer(cl))
	if msg := C.gpl_inject_fault(cl); msg != nil {
		defer C.free(unsafe.Pointer(msg))
		return errors.New("inject device fault: " + C.GoString(msg))
	}
	return nil
}
