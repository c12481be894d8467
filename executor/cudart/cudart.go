// Package cudart asks the CUDA runtime which device an executor got and how
// much of it: the multiprocessors its context may use (fewer than the GPU's
// under an MPS thread percentage or in a MIG instance) and the device memory;
// and it opens device memory another process shares through a CUDA IPC
// handle (the daemon's CUDA shared-memory regions). It opens libcudart by
// name at run time, so gpuletd needs no CUDA to build and a CPU executor
// never loads it.
package cudart

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// CUDA runtime API values (cuda_runtime_api.h): cudaDevAttrMultiProcessorCount.
enum { attr_multiprocessor_count = 16 };

typedef int (*get_count_t)(int*);
typedef int (*get_attr_t)(int*, int, int);
typedef int (*mem_info_t)(size_t*, size_t*);
typedef const char* (*err_str_t)(int);

// gpl_cuda_query fills sms, free and total for device 0 from the CUDA runtime
// library lib. It returns NULL or an error message to free.
static char* gpl_cuda_query(const char* lib, int* count, int* sms, size_t* free_b, size_t* total_b) {
	void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL) h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char* e = dlerror();
		return strdup(e ? e : "dlopen failed");
	}
	get_count_t get_count = (get_count_t)dlsym(h, "cudaGetDeviceCount");
	get_attr_t get_attr = (get_attr_t)dlsym(h, "cudaDeviceGetAttribute");
	mem_info_t mem_info = (mem_info_t)dlsym(h, "cudaMemGetInfo");
	err_str_t err_str = (err_str_t)dlsym(h, "cudaGetErrorString");
	if (!get_count || !get_attr || !mem_info || !err_str) {
		dlclose(h);
		return strdup("the library lacks cudaGetDeviceCount, cudaDeviceGetAttribute, cudaMemGetInfo or cudaGetErrorString");
	}
	int rc = get_count(count);
	if (rc == 0 && *count > 0) rc = get_attr(sms, attr_multiprocessor_count, 0);
	if (rc == 0 && *count > 0) rc = mem_info(free_b, total_b);
	char* msg = rc == 0 ? NULL : strdup(err_str(rc));
	dlclose(h);
	return msg;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Library is the CUDA runtime's soname (CUDA 13, as ONNX Runtime 1.29.0's
// CUDA provider needs it).
const Library = "libcudart.so.13"

// ErrNoDevice is returned when the runtime sees no device.
var ErrNoDevice = errors.New("no CUDA device visible")

// Device is what the CUDA runtime reports for device 0 of this process (the
// GPU or MIG instance CUDA_VISIBLE_DEVICES leaves).
type Device struct {
	// Visible is how many devices the runtime sees.
	Visible int
	// SMCount is the multiprocessors this process's contexts may use.
	SMCount int
	// MemoryFree and MemoryTotal are the device memory, bytes.
	MemoryFree, MemoryTotal int64
}

// Query asks the CUDA runtime library lib (Library when empty).
func Query(lib string) (Device, error) {
	if lib == "" {
		lib = Library
	}
	cl := C.CString(lib)
	defer C.free(unsafe.Pointer(cl))
	var count, sms C.int
	var free, total C.size_t
	if err := takeError(C.gpl_cuda_query(cl, &count, &sms, &free, &total)); err != nil {
		return Device{}, fmt.Errorf("query CUDA device: %w", err)
	}
	if count == 0 {
		return Device{}, fmt.Errorf("query CUDA device: %w", ErrNoDevice)
	}
	return Device{Visible: int(count), SMCount: int(sms), MemoryFree: int64(free), MemoryTotal: int64(total)}, nil
}
