package onnxrt

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"
)

var (
	// ErrProviderLoad is returned when an execution provider's library
	// cannot be registered: the file is missing, a library it needs is
	// missing (MissingLibrary names it), or it is not a plugin provider.
	ErrProviderLoad = errors.New("execution provider library does not load")
	// ErrNoEPDevice is returned when a registered provider offers no device.
	ErrNoEPDevice = errors.New("execution provider has no device")
	// ErrProviderNotInstalled is returned (wrapping ErrProviderLoad) when the
	// provider's library file is not there at all.
	ErrProviderNotInstalled = errors.New("not installed")
)

// Provider library files, found beside the core library (make deps-gpu).
const (
	CUDAProviderLibrary     = "libonnxruntime_providers_cuda.so"
	TensorRTProviderLibrary = "libonnxruntime_providers_tensorrt.so"
)

// Execution provider names as ONNX Runtime reports them.
const (
	EPNameCPU      = "CPUExecutionProvider"
	EPNameCUDA     = "CUDAExecutionProvider"
	EPNameTensorRT = "TensorrtExecutionProvider"
)

// EPDevice is one pairing of an execution provider with a hardware device,
// as ONNX Runtime's GetEpDevices lists them.
type EPDevice struct {
	// EP and EPVendor name the execution provider ("CUDAExecutionProvider").
	EP       string `json:"ep"`
	EPVendor string `json:"ep_vendor"`
	// Type is the hardware device's kind: cpu, gpu or npu.
	Type string `json:"type"`
	// VendorID, Vendor and DeviceID describe the hardware (PCI ids).
	VendorID uint32 `json:"vendor_id"`
	Vendor   string `json:"vendor"`
	DeviceID uint32 `json:"device_id"`
	// Metadata is the hardware device's; EPMetadata and EPOptions the
	// provider's for it (the CUDA provider puts its device ordinal there).
	Metadata   map[string]string `json:"metadata,omitempty"`
	EPMetadata map[string]string `json:"ep_metadata,omitempty"`
	EPOptions  map[string]string `json:"ep_options,omitempty"`

	raw rawDevice
}

func hardwareType(t int) string {
	switch t {
	case 0:
		return "cpu"
	case 1:
		return "gpu"
	case 2:
		return "npu"
	}
	return fmt.Sprintf("type-%d", t)
}

// registered holds the provider libraries registered in this process.
var registered struct {
	mu   sync.Mutex
	libs map[string]string // registration name → path
}

// ProviderLibraryPath is where the library file of a plugin provider is
// looked for: beside the core library Init loaded.
func ProviderLibraryPath(file string) (string, error) {
	lib, ok := Library()
	if !ok {
		return "", fmt.Errorf("find %s: %w: call onnxrt.Init first", file, ErrNotInitialized)
	}
	return filepath.Join(filepath.Dir(lib), file), nil
}

// RegisterProvider registers the plugin execution provider library at path
// under name, once per process (a second call with the same name and path
// does nothing). The error wraps ErrProviderLoad with the loader's own
// message, which names a missing dependency (see MissingLibrary).
func RegisterProvider(name, path string) error {
	if err := initialized("register execution provider " + name); err != nil {
		return err
	}
	registered.mu.Lock()
	defer registered.mu.Unlock()
	if prev, ok := registered.libs[name]; ok {
		if prev == path {
			return nil
		}
		return fmt.Errorf("register execution provider %s: %w: %s is registered under that name", path, ErrProviderLoad, prev)
	}
	if !isFile(path) {
		return fmt.Errorf("register execution provider: %w: %w: %s does not exist", ErrProviderLoad, ErrProviderNotInstalled, path)
	}
	if err := registerLibrary(name, path); err != nil {
		return fmt.Errorf("register execution provider %s: %w: %s", path, ErrProviderLoad, strings.TrimPrefix(oneLine(err), "Failed to load library "+path+" with error: "))
	}
	if registered.libs == nil {
		registered.libs = map[string]string{}
	}
	registered.libs[name] = path
	return nil
}

// UnregisterProvider unregisters a library RegisterProvider registered.
// Sessions that use it must be closed first.
func UnregisterProvider(name string) error {
	registered.mu.Lock()
	defer registered.mu.Unlock()
	if _, ok := registered.libs[name]; !ok {
		return nil
	}
	if err := unregisterLibrary(name); err != nil {
		return fmt.Errorf("unregister execution provider %s: %s", name, oneLine(err))
	}
	delete(registered.libs, name)
	return nil
}

// EPDevices lists every execution provider device ONNX Runtime offers now:
// the built-in CPU provider's and those of registered plugin providers.
func EPDevices() ([]EPDevice, error) {
	if err := initialized("list execution provider devices"); err != nil {
		return nil, err
	}
	devs, err := listDevices()
	if err != nil {
		return nil, fmt.Errorf("list execution provider devices: %s", oneLine(err))
	}
	return devs, nil
}

// FindEPDevice returns the first device of the provider named ep, or
// ErrNoEPDevice listing what there is.
func FindEPDevice(ep string) (EPDevice, error) {
	devs, err := EPDevices()
	if err != nil {
		return EPDevice{}, err
	}
	var have []string
	for _, d := range devs {
		if d.EP == ep {
			return d, nil
		}
		have = append(have, d.EP+"/"+d.Type)
	}
	sort.Strings(have)
	return EPDevice{}, fmt.Errorf("find %s device: %w (ONNX Runtime offers %v)", ep, ErrNoEPDevice, have)
}

// AppendProvider adds dev's execution provider to the session options,
// with provider options (ONNX Runtime stores them as the session
// configuration entries ep.<provider>.<key>).
func AppendProvider(so *ort.SessionOptions, dev EPDevice, options map[string]string) error {
	if dev.raw == nil {
		return fmt.Errorf("append execution provider %s: %w: the device was not listed by EPDevices", dev.EP, ErrNoEPDevice)
	}
	if err := appendDevice(sessionOptionsPointer(so), dev.raw, options); err != nil {
		return fmt.Errorf("append execution provider %s: %s", dev.EP, oneLine(err))
	}
	return nil
}

// sessionOptionsPointer returns the OrtSessionOptions* inside onnxruntime_go's
// SessionOptions, whose only field it is (onnxruntime_go v1.27.0).
// TestSessionOptionsPointer checks this against onnxruntime_go's own calls.
func sessionOptionsPointer(so *ort.SessionOptions) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(so))
}

// missingLib matches the dynamic loader's message for a library it cannot
// find: "libcublasLt.so.13: cannot open shared object file: …".
var missingLib = regexp.MustCompile(`([A-Za-z0-9_.+-]+\.so(?:\.[0-9]+)*): cannot open shared object file`)

// MissingLibrary returns the library a loader error says is missing, or "".
func MissingLibrary(err error) string {
	if err == nil {
		return ""
	}
	if m := missingLib.FindStringSubmatch(err.Error()); m != nil {
		return m[1]
	}
	return ""
}
