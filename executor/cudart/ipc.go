package cudart

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// cudaIpcMemHandle_t: 64 opaque bytes, passed by value (CUDA_IPC_HANDLE_SIZE).
typedef struct { char reserved[64]; } gpl_ipc_handle;

// CUDA runtime API values (driver_types.h): cudaIpcMemLazyEnablePeerAccess,
// cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost.
enum { ipc_lazy_peer_access = 1, copy_host_to_device = 1, copy_device_to_host = 2 };

typedef int (*set_device_t)(int);
typedef int (*ipc_open_t)(void**, gpl_ipc_handle, unsigned int);
typedef int (*ipc_close_t)(void*);
typedef int (*memcpy_t)(void*, const void*, size_t, int);
typedef const char* (*ipc_err_str_t)(int);

// gpl_ipc is one opened IPC handle and the runtime calls it needs.
typedef struct {
	void* lib;
	set_device_t set_device;
	ipc_open_t open;
	ipc_close_t close;
	memcpy_t copy;
	ipc_err_str_t err_str;
	int device;
	void* ptr;
} gpl_ipc;

static char* gpl_ipc_error(gpl_ipc* m, const char* what, int rc) {
	const char* s = m->err_str ? m->err_str(rc) : "unknown error";
	size_t n = strlen(what) + strlen(s) + 3;
	char* msg = malloc(n);
	if (msg) { strcpy(msg, what); strcat(msg, ": "); strcat(msg, s); }
	return msg;
}

// gpl_ipc_open loads lib, selects device and opens handle into m. It
// returns NULL or an error message to free.
static char* gpl_ipc_open(const char* lib, int device, const void* handle, gpl_ipc* m) {
	m->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (m->lib == NULL) {
		const char* e = dlerror();
		return strdup(e ? e : "dlopen failed");
	}
	m->set_device = (set_device_t)dlsym(m->lib, "cudaSetDevice");
	m->open = (ipc_open_t)dlsym(m->lib, "cudaIpcOpenMemHandle");
	m->close = (ipc_close_t)dlsym(m->lib, "cudaIpcCloseMemHandle");
	m->copy = (memcpy_t)dlsym(m->lib, "cudaMemcpy");
	m->err_str = (ipc_err_str_t)dlsym(m->lib, "cudaGetErrorString");
	char* msg = NULL;
	int rc;
	gpl_ipc_handle h;
	if (!m->set_device || !m->open || !m->close || !m->copy || !m->err_str) {
		msg = strdup("the library lacks cudaSetDevice, cudaIpcOpenMemHandle, cudaIpcCloseMemHandle, cudaMemcpy or cudaGetErrorString");
	} else if ((rc = m->set_device(device)) != 0) {
		msg = gpl_ipc_error(m, "select the device", rc);
	} else {
		m->device = device;
		memcpy(h.reserved, handle, sizeof h.reserved);
		if ((rc = m->open(&m->ptr, h, ipc_lazy_peer_access)) != 0) msg = gpl_ipc_error(m, "open the IPC handle", rc);
	}
	if (msg != NULL) {
		dlclose(m->lib);
		m->lib = NULL;
	}
	return msg;
}

// gpl_ipc_copy copies n bytes between host and the opened memory at offset:
// into host when to_host, out of it otherwise.
static char* gpl_ipc_copy(gpl_ipc* m, void* host, size_t offset, size_t n, int to_host) {
	int rc = m->set_device(m->device);
	if (rc != 0) return gpl_ipc_error(m, "select the device", rc);
	char* dev = (char*)m->ptr + offset;
	rc = to_host ? m->copy(host, dev, n, copy_device_to_host) : m->copy(dev, host, n, copy_host_to_device);
	return rc == 0 ? NULL : gpl_ipc_error(m, "copy", rc);
}

// gpl_ipc_close closes the handle and unloads the library.
static char* gpl_ipc_close(gpl_ipc* m) {
	char* msg = NULL;
	int rc = m->set_device(m->device);
	if (rc == 0) rc = m->close(m->ptr);
	if (rc != 0) msg = gpl_ipc_error(m, "close the IPC handle", rc);
	dlclose(m->lib);
	m->lib = NULL;
	return msg;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// HandleSize is the size of a CUDA IPC memory handle (cudaIpcMemHandle_t).
const HandleSize = 64

// ErrClosed is returned by an IPCMemory used after Close.
var ErrClosed = errors.New("CUDA IPC memory is closed")

// IPCMemory is device memory another process shared through a CUDA IPC
// handle (cudaIpcGetMemHandle), opened in this process: bytes are copied
// between it and host memory. Its bounds are the caller's to check (the
// runtime does not say how large the shared allocation is). It is not safe
// for concurrent use with Close.
type IPCMemory struct {
	c *C.gpl_ipc // C memory: the runtime's function pointers and the device pointer
}

// OpenIPC opens handle, made on device (an ordinal as this process's CUDA
// runtime numbers devices), with the CUDA runtime library lib (Library when
// empty).
func OpenIPC(lib string, device int, handle []byte) (*IPCMemory, error) {
	if len(handle) != HandleSize {
		return nil, fmt.Errorf("open CUDA IPC handle: it has %d bytes, a CUDA IPC handle %d", len(handle), HandleSize)
	}
	if device < 0 {
		return nil, fmt.Errorf("open CUDA IPC handle: device %d is negative", device)
	}
	if lib == "" {
		lib = Library
	}
	cl := C.CString(lib)
	defer C.free(unsafe.Pointer(cl))
	m := (*C.gpl_ipc)(C.calloc(1, C.sizeof_gpl_ipc))
	if m == nil {
		return nil, errors.New("open CUDA IPC handle: out of memory")
	}
	if msg := C.gpl_ipc_open(cl, C.int(device), unsafe.Pointer(&handle[0]), m); msg != nil {
		defer C.free(unsafe.Pointer(msg))
		C.free(unsafe.Pointer(m))
		return nil, fmt.Errorf("open CUDA IPC handle on device %d: %s", device, C.GoString(msg))
	}
	return &IPCMemory{c: m}, nil
}

// ReadAt copies len(dst) bytes at offset of the device memory into dst.
func (m *IPCMemory) ReadAt(dst []byte, offset int64) error {
	return m.copy(dst, offset, true)
}

// WriteAt copies src into the device memory at offset.
func (m *IPCMemory) WriteAt(src []byte, offset int64) error {
	return m.copy(src, offset, false)
}

func (m *IPCMemory) copy(host []byte, offset int64, toHost bool) error {
	switch {
	case m.c == nil:
		return ErrClosed
	case offset < 0:
		return fmt.Errorf("copy CUDA IPC memory: offset %d is negative", offset)
	case len(host) == 0:
		return nil
	}
	dir := C.int(0)
	if toHost {
		dir = 1
	}
	if msg := C.gpl_ipc_copy(m.c, unsafe.Pointer(&host[0]), C.size_t(offset), C.size_t(len(host)), dir); msg != nil {
		defer C.free(unsafe.Pointer(msg))
		return fmt.Errorf("copy %d bytes at offset %d of CUDA IPC memory: %s", len(host), offset, C.GoString(msg))
	}
	return nil
}

// Close closes the handle in this process (the memory stays the owner's).
func (m *IPCMemory) Close() error {
	if m.c == nil {
		return ErrClosed
	}
	msg := C.gpl_ipc_close(m.c)
	C.free(unsafe.Pointer(m.c))
	m.c = nil
	if msg != nil {
		defer C.free(unsafe.Pointer(msg))
		return fmt.Errorf("close CUDA IPC memory: %s", C.GoString(msg))
	}
	return nil
}
