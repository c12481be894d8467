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
typedef int (*malloc_t)(void**, size_t);
typedef int (*free_t)(void*);
typedef int (*ipc_get_t)(gpl_ipc_handle*, void*);

// gpl_mem is device memory, opened from an IPC handle or allocated here
// (owned), and the runtime calls it needs.
typedef struct {
	void* lib;
	set_device_t set_device;
	ipc_open_t open;
	ipc_close_t close;
	memcpy_t copy;
	ipc_err_str_t err_str;
	malloc_t alloc;
	free_t free;
	ipc_get_t get_handle;
	int device;
	int owned;
	void* ptr;
} gpl_mem;

static char* gpl_mem_error(gpl_mem* m, const char* what, int rc) {
	const char* s = m->err_str ? m->err_str(rc) : "unknown error";
	size_t n = strlen(what) + strlen(s) + 3;
	char* msg = malloc(n);
	if (msg) { strcpy(msg, what); strcat(msg, ": "); strcat(msg, s); }
	return msg;
}

// gpl_mem_open loads lib and selects device, then opens handle into m, or
// (handle NULL) allocates size bytes there. It returns NULL or an error
// message to free.
static char* gpl_mem_open(const char* lib, int device, const void* handle, size_t size, gpl_mem* m) {
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
	m->alloc = (malloc_t)dlsym(m->lib, "cudaMalloc");
	m->free = (free_t)dlsym(m->lib, "cudaFree");
	m->get_handle = (ipc_get_t)dlsym(m->lib, "cudaIpcGetMemHandle");
	char* msg = NULL;
	int rc;
	gpl_ipc_handle h;
	if (!m->set_device || !m->open || !m->close || !m->copy || !m->err_str || !m->alloc || !m->free || !m->get_handle) {
		msg = strdup("the library lacks one of cudaSetDevice, cudaMalloc, cudaFree, cudaMemcpy, cudaIpcGetMemHandle, cudaIpcOpenMemHandle, cudaIpcCloseMemHandle, cudaGetErrorString");
	} else if ((rc = m->set_device(device)) != 0) {
		msg = gpl_mem_error(m, "select the device", rc);
	} else if (handle == NULL) {
		m->device = device;
		m->owned = 1;
		if ((rc = m->alloc(&m->ptr, size)) != 0) msg = gpl_mem_error(m, "allocate device memory", rc);
	} else {
		m->device = device;
		memcpy(h.reserved, handle, sizeof h.reserved);
		if ((rc = m->open(&m->ptr, h, ipc_lazy_peer_access)) != 0) msg = gpl_mem_error(m, "open the IPC handle", rc);
	}
	if (msg != NULL) {
		dlclose(m->lib);
		m->lib = NULL;
	}
	return msg;
}

// gpl_mem_handle_of writes the IPC handle of memory m allocated into out.
static char* gpl_mem_handle_of(gpl_mem* m, void* out) {
	gpl_ipc_handle h;
	int rc = m->set_device(m->device);
	if (rc == 0) rc = m->get_handle(&h, m->ptr);
	if (rc != 0) return gpl_mem_error(m, "get its IPC handle", rc);
	memcpy(out, h.reserved, sizeof h.reserved);
	return NULL;
}

// gpl_mem_copy copies n bytes between host and the opened memory at offset:
// into host when to_host, out of it otherwise.
static char* gpl_mem_copy(gpl_mem* m, void* host, size_t offset, size_t n, int to_host) {
	int rc = m->set_device(m->device);
	if (rc != 0) return gpl_mem_error(m, "select the device", rc);
	char* dev = (char*)m->ptr + offset;
	rc = to_host ? m->copy(host, dev, n, copy_device_to_host) : m->copy(dev, host, n, copy_host_to_device);
	return rc == 0 ? NULL : gpl_mem_error(m, "copy", rc);
}

// gpl_mem_close closes the handle (frees memory allocated here) and
// unloads the library.
static char* gpl_mem_close(gpl_mem* m) {
	char* msg = NULL;
	int rc = m->set_device(m->device);
	if (rc == 0) rc = m->owned ? m->free(m->ptr) : m->close(m->ptr);
	if (rc != 0) msg = gpl_mem_error(m, m->owned ? "free device memory" : "close the IPC handle", rc);
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

// ErrClosed is returned by a Memory used after Close.
var ErrClosed = errors.New("CUDA memory is closed")

// Memory is device memory this process reaches through the CUDA runtime:
// opened from the IPC handle another process shared it by (OpenIPC: the
// daemon's CUDA shared-memory regions), or allocated here to share
// (Alloc: a client of that extension, as the load generator). Bytes are
// copied between it and host memory. Its bounds are the caller's to check
// (the runtime does not say how large a shared allocation is). It is not
// safe for concurrent use with Close.
type Memory struct {
	c *C.gpl_mem // C memory: the runtime's function pointers and the device pointer
}

// OpenIPC opens handle, made on device (an ordinal as this process's CUDA
// runtime numbers devices), with the CUDA runtime library lib (Library when
// empty).
func OpenIPC(lib string, device int, handle []byte) (*Memory, error) {
	if len(handle) != HandleSize {
		return nil, fmt.Errorf("open CUDA IPC handle: it has %d bytes, a CUDA IPC handle %d", len(handle), HandleSize)
	}
	m, err := open(lib, device, unsafe.Pointer(&handle[0]), 0)
	if err != nil {
		return nil, fmt.Errorf("open CUDA IPC handle on device %d: %w", device, err)
	}
	return m, nil
}

// Alloc allocates size bytes on device with the CUDA runtime library lib
// (Library when empty); Close frees them.
func Alloc(lib string, device int, size int64) (*Memory, error) {
	if size <= 0 {
		return nil, fmt.Errorf("allocate CUDA memory: size %d is not positive", size)
	}
	m, err := open(lib, device, nil, size)
	if err != nil {
		return nil, fmt.Errorf("allocate %d bytes of CUDA memory on device %d: %w", size, device, err)
	}
	return m, nil
}

func open(lib string, device int, handle unsafe.Pointer, size int64) (*Memory, error) {
	if device < 0 {
		return nil, fmt.Errorf("device %d is negative", device)
	}
	if lib == "" {
		lib = Library
	}
	cl := C.CString(lib)
	defer C.free(unsafe.Pointer(cl))
	m := (*C.gpl_mem)(C.calloc(1, C.sizeof_gpl_mem))
	if m == nil {
		return nil, errors.New("out of memory")
	}
	if err := takeError(C.gpl_mem_open(cl, C.int(device), handle, C.size_t(size), m)); err != nil {
		C.free(unsafe.Pointer(m))
		return nil, err
	}
	return &Memory{c: m}, nil
}

// Handle is the IPC handle of memory Alloc allocated, for another process
// to open (cudaIpcGetMemHandle).
func (m *Memory) Handle() ([]byte, error) {
	switch {
	case m.c == nil:
		return nil, ErrClosed
	case m.c.owned == 0:
		return nil, errors.New("get CUDA IPC handle: the memory was opened from one")
	}
	out := make([]byte, HandleSize)
	if err := takeError(C.gpl_mem_handle_of(m.c, unsafe.Pointer(&out[0]))); err != nil {
		return nil, fmt.Errorf("get CUDA IPC handle: %w", err)
	}
	return out, nil
}

// ReadAt copies len(dst) bytes at offset of the device memory into dst.
func (m *Memory) ReadAt(dst []byte, offset int64) error {
	return m.copy(dst, offset, true)
}

// WriteAt copies src into the device memory at offset.
func (m *Memory) WriteAt(src []byte, offset int64) error {
	return m.copy(src, offset, false)
}

func (m *Memory) copy(host []byte, offset int64, toHost bool) error {
	switch {
	case m.c == nil:
		return ErrClosed
	case offset < 0:
		return fmt.Errorf("copy CUDA memory: offset %d is negative", offset)
	case len(host) == 0:
		return nil
	}
	dir := C.int(0)
	if toHost {
		dir = 1
	}
	if err := takeError(C.gpl_mem_copy(m.c, unsafe.Pointer(&host[0]), C.size_t(offset), C.size_t(len(host)), dir)); err != nil {
		return fmt.Errorf("copy %d bytes at offset %d of CUDA memory: %w", len(host), offset, err)
	}
	return nil
}

// Close closes an opened handle in this process (the memory stays its
// owner's), or frees memory Alloc allocated.
func (m *Memory) Close() error {
	if m.c == nil {
		return ErrClosed
	}
	err := takeError(C.gpl_mem_close(m.c))
	C.free(unsafe.Pointer(m.c))
	m.c = nil
	if err != nil {
		return fmt.Errorf("close CUDA memory: %w", err)
	}
	return nil
}

// takeError is a C helper's error message (NULL: none) as an error; it
// frees the message.
func takeError(msg *C.char) error {
	if msg == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(msg))
	return errors.New(C.GoString(msg))
}
