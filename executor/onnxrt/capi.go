package onnxrt

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// gpuletd calls the ONNX Runtime C API functions that onnxruntime_go does not
// wrap, or wraps too narrowly, through the OrtApi function table: plugin
// execution providers (ONNX Runtime 1.22 and later) and serving sessions,
// whose tensors may be scalars, BF16 or strings. OrtApi is a struct of function pointers that
// ONNX Runtime only ever appends to, so each function's position is a fixed
// fact of the ABI. The positions below are those of API version 24 (ONNX
// Runtime 1.24), the version asked for from GetApi; a newer library serves
// older versions unchanged. TestABIPositions exercises every one of them.
enum {
	ort_CreateStatus = 0,
	ort_GetErrorCode = 1,
	ort_GetErrorMessage = 2,
	ort_CreateEnv = 3,
	ort_CreateSession = 7,
	ort_Run = 9,
	ort_CreateRunOptions = 39,
	ort_RunOptionsSetRunLogSeverityLevel = 41,
	ort_RunOptionsSetTerminate = 46,
	ort_CreateTensorAsOrtValue = 48,
	ort_CreateTensorWithDataAsOrtValue = 49,
	ort_GetTensorMutableData = 51,
	ort_FillStringTensor = 52,
	ort_GetStringTensorDataLength = 53,
	ort_GetStringTensorContent = 54,
	ort_GetTensorElementType = 60,
	ort_GetDimensionsCount = 61,
	ort_GetDimensions = 62,
	ort_GetTensorShapeElementCount = 64,
	ort_GetTensorTypeAndShape = 65,
	ort_GetValueType = 67,
	ort_CreateCpuMemoryInfo = 69,
	ort_GetAllocatorWithDefaultOptions = 78,
	ort_ReleaseEnv = 92,
	ort_ReleaseStatus = 93,
	ort_ReleaseSession = 95,
	ort_ReleaseValue = 96,
	ort_ReleaseRunOptions = 97,
	ort_ReleaseTensorTypeAndShapeInfo = 99,
	ort_AddSessionConfigEntry = 130,
	ort_RegisterCustomOpsLibrary_V2 = 228,
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
static void* g_cpu_memory; // OrtMemoryInfo of CPU memory, for tensors over Go bytes

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
	void* mem = NULL;
	// OrtArenaAllocator (1), OrtMemTypeDefault (0), as the values wrap
	// memory the caller owns.
	st = ((status_t (*)(int, int, void**))table[ort_CreateCpuMemoryInfo])(1, 0, &mem);
	if (st != NULL) {
		char* msg = strdup(((const char* (*)(status_t))table[ort_GetErrorMessage])(st));
		((void (*)(status_t))table[ort_ReleaseStatus])(st);
		((void (*)(void*))table[ort_ReleaseEnv])(env);
		return msg;
	}
	g_api = table;
	g_env = env;
	g_cpu_memory = mem;
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

// gpl_register_ops loads a custom operator library into so: ONNX Runtime
// opens it and calls its RegisterCustomOps, and keeps it open while a
// session opened with so lives.
static char* gpl_register_ops(void* so, const char* path) {
	return take(FN(ort_RegisterCustomOpsLibrary_V2, status_t (*)(void*, const char*))(so, path));
}

// Sessions and values.

static char* gpl_session_open(const char* path, const void* so, void** out) {
	return take(FN(ort_CreateSession, status_t (*)(const void*, const char*, const void*, void**))(g_env, path, so, out));
}

static void gpl_session_release(void* s) { FN(ort_ReleaseSession, void (*)(void*))(s); }

// gpl_run_options makes the options of one run, whose own log says only
// what is fatal: a run that fails returns its error, which the executor
// answers with, and ONNX Runtime's line on stderr for each would let
// clients that send bad inputs fill the log.
static char* gpl_run_options(void** out) {
	char* err = take(FN(ort_CreateRunOptions, status_t (*)(void**))(out));
	if (err != NULL) {
		return err;
	}
	err = take(FN(ort_RunOptionsSetRunLogSeverityLevel, status_t (*)(void*, int))(*out, 4)); // ORT_LOGGING_LEVEL_FATAL
	if (err != NULL) {
		FN(ort_ReleaseRunOptions, void (*)(void*))(*out);
		*out = NULL;
	}
	return err;
}

static char* gpl_run_terminate(void* ro) {
	return take(FN(ort_RunOptionsSetTerminate, status_t (*)(void*))(ro));
}

static void gpl_run_options_release(void* ro) { FN(ort_ReleaseRunOptions, void (*)(void*))(ro); }

// gpl_run runs a session; a failure's OrtErrorCode goes to code.
static char* gpl_run(void* s, const void* ro, const char* const* in_names, const void* const* ins, size_t n_in,
                     const char* const* out_names, size_t n_out, void** outs, int* code) {
	status_t st = FN(ort_Run, status_t (*)(void*, const void*, const char* const*, const void* const*, size_t,
	                                        const char* const*, size_t, void**))(
	    s, ro, in_names, ins, n_in, out_names, n_out, outs);
	if (st != NULL) *code = FN(ort_GetErrorCode, int (*)(status_t))(st);
	return take(st);
}

// gpl_tensor_over wraps len bytes at data, which the caller keeps alive and
// in place until the value is released, in a tensor of the given shape and
// element type. rank may be 0 (a scalar).
static char* gpl_tensor_over(void* data, size_t len, const int64_t* shape, size_t rank, int type, void** out) {
	static const int64_t none[1] = {0};
	return take(FN(ort_CreateTensorWithDataAsOrtValue,
	               status_t (*)(const void*, void*, size_t, const int64_t*, size_t, int, void**))(
	    g_cpu_memory, data, len, rank == 0 ? none : shape, rank, type, out));
}

// gpl_string_tensor makes a string tensor (ONNX element type 8) of n
// NUL-terminated strings.
static char* gpl_string_tensor(const int64_t* shape, size_t rank, const char* const* strs, size_t n, void** out) {
	static const int64_t none[1] = {0};
	void* alloc = NULL;
	char* err = take(FN(ort_GetAllocatorWithDefaultOptions, status_t (*)(void**))(&alloc));
	if (err != NULL) return err;
	err = take(FN(ort_CreateTensorAsOrtValue, status_t (*)(void*, const int64_t*, size_t, int, void**))(
	    alloc, rank == 0 ? none : shape, rank, 8, out));
	if (err != NULL) return err;
	if (n == 0) return NULL;
	err = take(FN(ort_FillStringTensor, status_t (*)(void*, const char* const*, size_t))(*out, strs, n));
	if (err != NULL) {
		FN(ort_ReleaseValue, void (*)(void*))(*out);
		*out = NULL;
	}
	return err;
}

static void gpl_value_release(void* v) { FN(ort_ReleaseValue, void (*)(void*))(v); }

// gpl_value_describe reports a tensor value's element type, rank, dims (up
// to cap of them) and element count. A value that is not a tensor gives an
// error.
static char* gpl_value_describe(const void* v, int* type, size_t* rank, int64_t* dims, size_t cap, size_t* count) {
	int vt = 0;
	char* err = take(FN(ort_GetValueType, status_t (*)(const void*, int*))(v, &vt));
	if (err != NULL) return err;
	if (vt != 1) return strdup("the value is not a tensor");
	void* info = NULL;
	err = take(FN(ort_GetTensorTypeAndShape, status_t (*)(const void*, void**))(v, &info));
	if (err != NULL) return err;
	err = take(FN(ort_GetTensorElementType, status_t (*)(const void*, int*))(info, type));
	if (err == NULL) err = take(FN(ort_GetDimensionsCount, status_t (*)(const void*, size_t*))(info, rank));
	if (err == NULL && *rank > cap) err = strdup("the tensor's rank is too high");
	if (err == NULL) err = take(FN(ort_GetDimensions, status_t (*)(const void*, int64_t*, size_t))(info, dims, *rank));
	if (err == NULL) err = take(FN(ort_GetTensorShapeElementCount, status_t (*)(const void*, size_t*))(info, count));
	FN(ort_ReleaseTensorTypeAndShapeInfo, void (*)(void*))(info);
	return err;
}

static char* gpl_value_data(void* v, void** data) {
	return take(FN(ort_GetTensorMutableData, status_t (*)(void*, void**))(v, data));
}

static char* gpl_string_length(const void* v, size_t* len) {
	return take(FN(ort_GetStringTensorDataLength, status_t (*)(const void*, size_t*))(v, len));
}

static char* gpl_string_content(const void* v, void* buf, size_t len, size_t* offsets, size_t n) {
	return take(FN(ort_GetStringTensorContent, status_t (*)(const void*, void*, size_t, size_t*, size_t))(
	    v, buf, len, offsets, n));
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

// registerOpLibrary loads the custom operator library at path into so.
func registerOpLibrary(so unsafe.Pointer, path string) error {
	p := C.CString(path)
	defer C.free(unsafe.Pointer(p))
	return cErr(C.gpl_register_ops(so, p))
}

// The Go side of sessions and values. Arrays handed to C live in C memory,
// as they hold pointers.

func sessionOpen(path string, so unsafe.Pointer) (unsafe.Pointer, error) {
	p := C.CString(path)
	defer C.free(unsafe.Pointer(p))
	var s unsafe.Pointer
	return s, cErr(C.gpl_session_open(p, so, &s))
}

func sessionRelease(s unsafe.Pointer) { C.gpl_session_release(s) }

// cStrings copies names into one C array of C strings; freeCStrings frees
// it.
func cStrings(names []string) unsafe.Pointer {
	p := C.calloc(C.size_t(max(len(names), 1)), C.size_t(unsafe.Sizeof(uintptr(0))))
	arr := unsafe.Slice((**C.char)(p), max(len(names), 1))
	for i, n := range names {
		arr[i] = C.CString(n)
	}
	return p
}

func freeCStrings(p unsafe.Pointer, n int) {
	arr := unsafe.Slice((**C.char)(p), max(n, 1))
	for _, s := range arr[:n] {
		C.free(unsafe.Pointer(s))
	}
	C.free(p)
}

// cPointers allocates n nil pointer slots in C memory; free with freeC.
func cPointers(n int) []unsafe.Pointer {
	p := C.calloc(C.size_t(max(n, 1)), C.size_t(unsafe.Sizeof(uintptr(0))))
	return unsafe.Slice((*unsafe.Pointer)(p), max(n, 1))[:n]
}

func freeC(p []unsafe.Pointer) { C.free(unsafe.Pointer(unsafe.SliceData(p))) }

func runOptionsNew() (unsafe.Pointer, error) {
	var ro unsafe.Pointer
	return ro, cErr(C.gpl_run_options(&ro))
}

func runTerminate(ro unsafe.Pointer) error { return cErr(C.gpl_run_terminate(ro)) }

func runOptionsRelease(ro unsafe.Pointer) { C.gpl_run_options_release(ro) }

// run calls Run with names holding the nIn input names then the output
// names, and ins and outs from cPointers.
// A failure ONNX Runtime reports as ORT_INVALID_ARGUMENT (its
// OrtErrorCode 2: the inputs' values or shapes, such as an index past a
// Gather's data) is an ErrInvalidArgument.
func run(s, ro, names unsafe.Pointer, ins, outs []unsafe.Pointer) error {
	arr := (**C.char)(names)
	outNames := (**C.char)(unsafe.Add(names, len(ins)*int(unsafe.Sizeof(uintptr(0)))))
	var code C.int
	err := cErr(C.gpl_run(s, ro, arr, (*unsafe.Pointer)(unsafe.Pointer(unsafe.SliceData(ins))), C.size_t(len(ins)),
		outNames, C.size_t(len(outs)), (*unsafe.Pointer)(unsafe.Pointer(unsafe.SliceData(outs))), &code))
	if err != nil && code == ortInvalidArgument {
		return &invalidArgument{err}
	}
	return err
}

// ortInvalidArgument is ORT_INVALID_ARGUMENT in ONNX Runtime's OrtErrorCode.
const ortInvalidArgument = 2

// invalidArgument is a run's error that ONNX Runtime blamed on its inputs.
type invalidArgument struct{ error }

func (e *invalidArgument) Unwrap() []error { return []error{e.error, ErrInvalidArgument} }

// cShape copies a shape into C memory (nil for a scalar); free with C.free.
func cShape(shape []int64) *C.int64_t {
	if len(shape) == 0 {
		return nil
	}
	p := (*C.int64_t)(C.malloc(C.size_t(8 * len(shape))))
	copy(unsafe.Slice((*int64)(unsafe.Pointer(p)), len(shape)), shape)
	return p
}

// tensorOver wraps n bytes at data, which the caller keeps alive and in
// place (pinned) until the value is released.
func tensorOver(data unsafe.Pointer, n int, shape []int64, elementType int) (unsafe.Pointer, error) {
	cs := cShape(shape)
	defer C.free(unsafe.Pointer(cs))
	var v unsafe.Pointer
	return v, cErr(C.gpl_tensor_over(data, C.size_t(n), cs, C.size_t(len(shape)), C.int(elementType), &v))
}

// stringTensor makes a string tensor of elems, none of which may hold a
// zero byte (the caller checks).
func stringTensor(shape []int64, elems [][]byte) (unsafe.Pointer, error) {
	cs := cShape(shape)
	defer C.free(unsafe.Pointer(cs))
	strs := unsafe.Slice((**C.char)(C.calloc(C.size_t(max(len(elems), 1)), C.size_t(unsafe.Sizeof(uintptr(0))))), max(len(elems), 1))
	defer C.free(unsafe.Pointer(unsafe.SliceData(strs)))
	for i, e := range elems {
		s := (*C.char)(C.malloc(C.size_t(len(e) + 1)))
		copy(unsafe.Slice((*byte)(unsafe.Pointer(s)), len(e)+1), append(e[:len(e):len(e)], 0))
		strs[i] = s
	}
	defer func() {
		for _, s := range strs[:len(elems)] {
			C.free(unsafe.Pointer(s))
		}
	}()
	var v unsafe.Pointer
	return v, cErr(C.gpl_string_tensor(cs, C.size_t(len(shape)), unsafe.SliceData(strs), C.size_t(len(elems)), &v))
}

func valueRelease(v unsafe.Pointer) { C.gpl_value_release(v) }

// valueDescribe returns a tensor value's ONNX element type, shape and
// element count.
func valueDescribe(v unsafe.Pointer) (elementType int, shape []int64, count int, err error) {
	var et C.int
	var rank, n C.size_t
	var dims [maxRank]C.int64_t
	if err := cErr(C.gpl_value_describe(v, &et, &rank, &dims[0], maxRank, &n)); err != nil {
		return 0, nil, 0, err
	}
	shape = make([]int64, int(rank))
	for i := range shape {
		shape[i] = int64(dims[i])
	}
	return int(et), shape, int(n), nil
}

// valueBytes copies the first n bytes of a tensor value's data.
func valueBytes(v unsafe.Pointer, n int) ([]byte, error) {
	var p unsafe.Pointer
	if err := cErr(C.gpl_value_data(v, &p)); err != nil {
		return nil, err
	}
	return C.GoBytes(p, C.int(n)), nil
}

// valueStrings returns a string tensor's n elements, views of one buffer.
func valueStrings(v unsafe.Pointer, n int) ([][]byte, error) {
	var total C.size_t
	if err := cErr(C.gpl_string_length(v, &total)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	// Go memory is handed to C for the call only and holds no pointers.
	buf := make([]byte, int(total)+1)
	offsets := make([]C.size_t, n)
	if err := cErr(C.gpl_string_content(v, unsafe.Pointer(&buf[0]), total, &offsets[0], C.size_t(n))); err != nil {
		return nil, err
	}
	out := make([][]byte, n)
	for i := range n {
		end := int(total)
		if i+1 < n {
			end = int(offsets[i+1])
		}
		out[i] = buf[int(offsets[i]):end:end]
	}
	return out, nil
}
