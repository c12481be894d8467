package onnxrt

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// gpuletd calls the few ONNX Runtime C API functions that onnxruntime_go does
// not wrap (plugin execution providers, ONNX Runtime 1.22 and later) through
// the OrtApi function table. OrtApi is a struct of function pointers that
// ONNX Runtime only ever appends to, so each function's position is a fixed
// fact of the ABI. The positions below are those of API version 24 (ONNX
// Runtime 1.24), the version asked for from GetApi; a newer library serves
// older versions unchanged. TestABIPositions exercises every one of them.
enum {
	ort_CreateStatus = 0,
	ort_GetErrorMessage = 2,
	ort_CreateEnv = 3,
	ort_ReleaseEnv = 92,
	ort_ReleaseStatus = 93,
	ort_AddSessionConfigEntry = 130,
	ort_GetKeyValuePairs = 298,
	ort_RegisterExecutionProviderLibrary = 301,
	ort_UnregisterExecutionProviderLibrary = 302,
	ort_GetEpDevices = 303,
	ort_SessionOptionsAppendExecutionProvider_V2 = 304,
	ort_HardwareDevice_Type = 307,
	ort_HardwareDevice_VendorId = 308,
	ort_HardwareDevice_Vendor = 309,
	ort_HardwareDevice_DeviceId = 310,
	ort_HardwareDevice_Metadata = 311,
	ort_EpDevice_EpName = 312,
	ort_EpDevice_EpVendor = 313,
	ort_EpDevice_EpMetadata = 314,
	ort_EpDevice_EpOptions = 315,
	ort_EpDevice_Device = 316,
	ort_api_version = 24,
};

typedef void* status_t;
typedef struct { const void* (*get_api)(uint32_t); const char* (*get_version)(void); } api_base_t;

static const void* const* g_api;
static void* g_env;

#define FN(idx, type) ((type)(g_api[idx]))

// gpl_ep_init finds the OrtApi of the library at path (already loaded by
// onnxruntime_go) and takes a reference on the process's one OrtEnv, which
// CreateEnv returns when one exists. It returns NULL or an error message to
// free.
static char* gpl_ep_init(const char* path) {
	if (g_api != NULL) return NULL;
	void* h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (h == NULL) return strdup("the library is not loaded in this process");
	const api_base_t* (*get_base)(void) = (const api_base_t* (*)(void))dlsym(h, "OrtGetApiBase");
	if (get_base == NULL) { dlclose(h); return strdup("OrtGetApiBase not found"); }
	const void* api = get_base()->get_api(ort_api_version);
	dlclose(h);
	if (api == NULL) return strdup("the library does not serve ONNX Runtime API version 24");
	const void* const* table = (const void* const*)api;
	void* env = NULL;
	status_t st = ((status_t (*)(int, const char*, void**))table[ort_CreateEnv])(3, "gpuletd", &env);
	if (st != NULL) {
		char* msg = strdup(((const char* (*)(status_t))table[ort_GetErrorMessage])(st));
		((void (*)(status_t))table[ort_ReleaseStatus])(st);
		return msg;
	}
	g_api = table;
	g_env = env;
	return NULL;
}

// take turns a status into an error message to free (NULL for success).
static char* take(status_t st) {
	if (st == NULL) return NULL;
	char* msg = strdup(FN(ort_GetErrorMessage, const char* (*)(status_t))(st));
	FN(ort_ReleaseStatus, void (*)(status_t))(st);
	return msg;
}

static char* gpl_status_roundtrip(const char* msg) {
	return take(FN(ort_CreateStatus, status_t (*)(int, const char*))(1, msg));
}

static char* gpl_register(const char* name, const char* path) {
	return take(FN(ort_RegisterExecutionProviderLibrary, status_t (*)(void*, const char*, const char*))(g_env, name, path));
}

static char* gpl_unregister(const char* name) {
	return take(FN(ort_UnregisterExecutionProviderLibrary, status_t (*)(void*, const char*))(g_env, name));
}

static char* gpl_devices(const void* const** out, size_t* n) {
	return take(FN(ort_GetEpDevices, status_t (*)(const void*, const void* const**, size_t*))(g_env, out, n));
}

static const void* gpl_device_at(const void* const* devs, size_t i) { return devs[i]; }

static const char* gpl_ep_name(const void* d) { return FN(ort_EpDevice_EpName, const char* (*)(const void*))(d); }
static const char* gpl_ep_vendor(const void* d) { return FN(ort_EpDevice_EpVendor, const char* (*)(const void*))(d); }
static const void* gpl_ep_metadata(const void* d) { return FN(ort_EpDevice_EpMetadata, const void* (*)(const void*))(d); }
static const void* gpl_ep_options(const void* d) { return FN(ort_EpDevice_EpOptions, const void* (*)(const void*))(d); }
static const void* gpl_ep_hw(const void* d) { return FN(ort_EpDevice_Device, const void* (*)(const void*))(d); }
static int gpl_hw_type(const void* h) { return FN(ort_HardwareDevice_Type, int (*)(const void*))(h); }
static uint32_t gpl_hw_vendor_id(const void* h) { return FN(ort_HardwareDevice_VendorId, uint32_t (*)(const void*))(h); }
static const char* gpl_hw_vendor(const void* h) { return FN(ort_HardwareDevice_Vendor, const char* (*)(const void*))(h); }
static uint32_t gpl_hw_device_id(const void* h) { return FN(ort_HardwareDevice_DeviceId, uint32_t (*)(const void*))(h); }
static const void* gpl_hw_metadata(const void* h) { return FN(ort_HardwareDevice_Metadata, const void* (*)(const void*))(h); }

static void gpl_kv(const void* kv, const char* const** keys, const char* const** vals, size_t* n) {
	*n = 0;
	if (kv == NULL) return;
	FN(ort_GetKeyValuePairs, void (*)(const void*, const char* const**, const char* const**, size_t*))(kv, keys, vals, n);
}

static const char* gpl_str_at(const char* const* a, size_t i) { return a[i]; }

static char* gpl_append(void* so, const void* dev, const char** keys, const char** vals, size_t n) {
	const void* devs[1] = {dev};
	return take(FN(ort_SessionOptionsAppendExecutionProvider_V2,
	               status_t (*)(void*, void*, const void* const*, size_t, const char* const*, const char* const*, size_t))(
	    so, g_env, devs, 1, (const char* const*)keys, (const char* const*)vals, n));
}

static char* gpl_add_config(void* so, const char* key, const char* val) {
	return take(FN(ort_AddSessionConfigEntry, status_t (*)(void*, const char*, const char*))(so, key, val));
}
*/
import "C"

import (
	"errors"
	"unsafe"
)

// cErr turns a message from the C side into an error (nil for none) and
// frees it.
func cErr(msg *C.char) error {
	if msg == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(msg))
	return errors.New(C.GoString(msg))
}

func epInit(path string) error {
	p := C.CString(path)
	defer C.free(unsafe.Pointer(p))
	return cErr(C.gpl_ep_init(p))
}

func statusRoundTrip(msg string) error {
	m := C.CString(msg)
	defer C.free(unsafe.Pointer(m))
	return cErr(C.gpl_status_roundtrip(m))
}

func registerLibrary(name, path string) error {
	n, p := C.CString(name), C.CString(path)
	defer C.free(unsafe.Pointer(n))
	defer C.free(unsafe.Pointer(p))
	return cErr(C.gpl_register(n, p))
}

func unregisterLibrary(name string) error {
	n := C.CString(name)
	defer C.free(unsafe.Pointer(n))
	return cErr(C.gpl_unregister(n))
}

// rawDevice is one OrtEpDevice pointer, owned by ONNX Runtime for as long
// as its library stays registered.
type rawDevice = unsafe.Pointer

func listDevices() ([]EPDevice, error) {
	var arr *unsafe.Pointer
	var n C.size_t
	if err := cErr(C.gpl_devices((**unsafe.Pointer)(unsafe.Pointer(&arr)), &n)); err != nil {
		return nil, err
	}
	out := make([]EPDevice, 0, int(n))
	for i := range int(n) {
		d := C.gpl_device_at((*unsafe.Pointer)(unsafe.Pointer(arr)), C.size_t(i))
		hw := C.gpl_ep_hw(d)
		out = append(out, EPDevice{
			EP:         C.GoString(C.gpl_ep_name(d)),
			EPVendor:   C.GoString(C.gpl_ep_vendor(d)),
			Type:       hardwareType(int(C.gpl_hw_type(hw))),
			VendorID:   uint32(C.gpl_hw_vendor_id(hw)),
			Vendor:     C.GoString(C.gpl_hw_vendor(hw)),
			DeviceID:   uint32(C.gpl_hw_device_id(hw)),
			Metadata:   keyValues(C.gpl_hw_metadata(hw)),
			EPMetadata: keyValues(C.gpl_ep_metadata(d)),
			EPOptions:  keyValues(C.gpl_ep_options(d)),
			raw:        d,
		})
	}
	return out, nil
}

func keyValues(kv unsafe.Pointer) map[string]string {
	var keys, vals **C.char
	var n C.size_t
	C.gpl_kv(kv, &keys, &vals, &n)
	if n == 0 {
		return nil
	}
	out := make(map[string]string, int(n))
	for i := range int(n) {
		k := C.gpl_str_at(keys, C.size_t(i))
		v := C.gpl_str_at(vals, C.size_t(i))
		out[C.GoString(k)] = C.GoString(v)
	}
	return out
}

func appendDevice(so unsafe.Pointer, dev rawDevice, options map[string]string) error {
	n := len(options)
	keys := C.malloc(C.size_t(max(n, 1)) * C.size_t(unsafe.Sizeof(uintptr(0))))
	vals := C.malloc(C.size_t(max(n, 1)) * C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(keys)
	defer C.free(vals)
	ks := unsafe.Slice((**C.char)(keys), max(n, 1))
	vs := unsafe.Slice((**C.char)(vals), max(n, 1))
	i := 0
	for k, v := range options {
		ks[i], vs[i] = C.CString(k), C.CString(v)
		i++
	}
	defer func() {
		for j := range n {
			C.free(unsafe.Pointer(ks[j]))
			C.free(unsafe.Pointer(vs[j]))
		}
	}()
	return cErr(C.gpl_append(so, dev, (**C.char)(keys), (**C.char)(vals), C.size_t(n)))
}

func addConfigEntry(so unsafe.Pointer, key, value string) error {
	k, v := C.CString(key), C.CString(value)
	defer C.free(unsafe.Pointer(k))
	defer C.free(unsafe.Pointer(v))
	return cErr(C.gpl_add_config(so, k, v))
}
