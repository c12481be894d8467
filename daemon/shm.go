package daemon

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gpulet/gpuletd/executor/cudart"
)

// shmDir is where Linux keeps POSIX shared-memory objects: the object a
// client made with shm_open("/name") is the file shmDir/name.
const shmDir = "/dev/shm"

// Errors of the shared-memory registry; the HTTP and gRPC layers map them.
var (
	errShmUnknown = errors.New("no shared-memory region of that name is registered")
	errShmExists  = errors.New("a shared-memory region of that name is already registered")
	errShmBad     = errors.New("bad shared-memory region")
	errShmOff     = errors.New("shared memory is not served here")
	// errShmNotAllowed: allow_client_shm is off, as Triton's
	// --allow-client-shm is by default (HTTP 501, gRPC UNIMPLEMENTED).
	errShmNotAllowed = errors.New("refused: clients may not register shared memory here: allow_client_shm (GPULETD_ALLOW_CLIENT_SHM) is off; " +
		"turn it on to let local clients place tensors in shared memory")
)

// regionKind tells Triton's two shared-memory extensions apart: their
// regions share one namespace, but each extension lists and unregisters
// only its own.
type regionKind int

const (
	systemRegion regionKind = iota // a POSIX shared-memory object, mapped
	cudaRegion                     // GPU memory shared through a CUDA IPC handle
)

func (k regionKind) String() string {
	if k == cudaRegion {
		return "CUDA shared-memory region"
	}
	return "system shared-memory region"
}

// shmRegion is one registered region. A system region is byteSize bytes at
// offset in the object key, mapped into the daemon; a CUDA region is
// byteSize bytes of device memory on DeviceID, opened from the client's
// IPC handle.
type shmRegion struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	Offset   int64  `json:"offset"`
	ByteSize int64  `json:"byte_size"`
	DeviceID int64  `json:"-"`

	kind    regionKind
	mapping []byte       // a system region's object from 0 to offset+byteSize, for munmap
	mem     []byte       // a system region: mapping[offset:]
	dev     deviceMemory // a CUDA region's memory
}

// deviceMemory is a CUDA region's device memory as the daemon reaches it:
// copies between it and host memory (cudart.Memory: the hardware edge).
type deviceMemory interface {
	ReadAt(dst []byte, offset int64) error
	WriteAt(src []byte, offset int64) error
	Close() error
}

// cudaOpener opens a client's CUDA IPC handle made on device.
type cudaOpener func(device int, handle []byte) (deviceMemory, error)

// sharedMemory is the registry of Triton's system and CUDA shared-memory
// extensions: local clients register a region of a POSIX shared-memory
// object, or of GPU memory they share with a CUDA IPC handle, and then place
// inputs (read from it) and outputs (written into it) there instead of in
// the request and the answer. The daemon copies a CUDA region's bytes
// between the GPU and host memory, so its executors take them as any
// other. Requests copy in and out under the read lock; unregistering takes
// the write lock, so no region is released while a request uses it.
type sharedMemory struct {
	dir string // shmDir; tests may point elsewhere
	// maxRead bounds one input read out of a region, as
	// limits.max_request_body bounds a body (nil: no bound).
	maxRead func() int64
	// openCUDA opens CUDA regions (nil: the CUDA extension is not served).
	openCUDA cudaOpener
	// allowed says whether clients may register regions now
	// (allow_client_shm; nil: they may).
	allowed func() bool

	mu      sync.RWMutex
	regions map[string]*shmRegion
}

func newSharedMemory(dir string) *sharedMemory {
	return &sharedMemory{dir: dir, regions: map[string]*shmRegion{}}
}

// register maps byteSize bytes at offset of the shared-memory object key
// (as shm_open names it: "/name") as the region name.
func (s *sharedMemory) register(name, key string, offset, byteSize int64) error {
	switch {
	case s == nil:
		return errShmOff
	case !s.clientsAllowed():
		return errShmNotAllowed
	case name == "":
		return fmt.Errorf("%w: no region name", errShmBad)
	case byteSize <= 0 || offset < 0:
		return fmt.Errorf("%w: region %q: byte_size %d must be positive and offset %d not negative", errShmBad, name, byteSize, offset)
	}
	file, err := s.objectPath(key)
	if err != nil {
		return fmt.Errorf("%w: region %q: %v", errShmBad, name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.clientsAllowed() { // turned off meanwhile: the reload's close may have run
		return errShmNotAllowed
	}
	if _, ok := s.regions[name]; ok {
		return fmt.Errorf("%w: %q", errShmExists, name)
	}
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("%w: region %q: open shared-memory object %q: %v", errShmBad, name, key, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%w: region %q: %v", errShmBad, name, err)
	}
	if end := offset + byteSize; end > st.Size() || end < offset {
		return fmt.Errorf("%w: region %q: offset %d + byte_size %d runs past the end of %q (%d bytes)", errShmBad, name, offset, byteSize, key, st.Size())
	}
	mapping, err := unix.Mmap(int(f.Fd()), 0, int(offset+byteSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("%w: region %q: map %q: %v", errShmBad, name, key, err)
	}
	s.regions[name] = &shmRegion{Name: name, Key: key, Offset: offset, ByteSize: byteSize, mapping: mapping, mem: mapping[offset:]}
	return nil
}

// registerCUDA opens byteSize bytes of device memory that a client shared
// with a CUDA IPC handle made on device, as the region name.
func (s *sharedMemory) registerCUDA(name string, device int64, handle []byte, byteSize int64) error {
	switch {
	case s == nil:
		return errShmOff
	case !s.clientsAllowed():
		return errShmNotAllowed
	case s.openCUDA == nil:
		return fmt.Errorf("%w: CUDA shared memory needs the daemon's CUDA runtime", errShmOff)
	case name == "":
		return fmt.Errorf("%w: no region name", errShmBad)
	case byteSize <= 0:
		return fmt.Errorf("%w: region %q: byte_size %d must be positive", errShmBad, name, byteSize)
	case device < 0 || device > math.MaxInt32:
		return fmt.Errorf("%w: region %q: device_id %d is not a device", errShmBad, name, device)
	case len(handle) != cudart.HandleSize:
		return fmt.Errorf("%w: region %q: raw_handle has %d bytes, a CUDA IPC handle (cudaIpcGetMemHandle) %d", errShmBad, name, len(handle), cudart.HandleSize)
	}
	if s.exists(name) {
		return fmt.Errorf("%w: %q", errShmExists, name)
	}
	// Opened outside the lock: the first open makes the daemon's CUDA
	// context, which takes a while, and requests copy under the lock.
	dev, err := s.openCUDA(int(device), handle)
	if err != nil {
		return fmt.Errorf("%w: region %q: %v", errShmBad, name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.clientsAllowed() { // turned off meanwhile: the reload's close may have run
		_ = dev.Close()
		return errShmNotAllowed
	}
	if _, ok := s.regions[name]; ok { // registered meanwhile
		_ = dev.Close()
		return fmt.Errorf("%w: %q", errShmExists, name)
	}
	s.regions[name] = &shmRegion{Name: name, ByteSize: byteSize, DeviceID: device, kind: cudaRegion, dev: dev}
	return nil
}

// exists says whether a region of either kind is registered as name.
func (s *sharedMemory) exists(name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.regions[name]
	return ok
}

// objectPath is the file of the shared-memory object key: one name after
// the leading slash, nothing that leaves the directory.
func (s *sharedMemory) objectPath(key string) (string, error) {
	name, ok := strings.CutPrefix(key, "/")
	if !ok || name == "" || strings.Contains(name, "/") || name == "." || name == ".." {
		return "", fmt.Errorf("key %q is not a shared-memory object name (one name after a slash, as shm_open takes it: \"/input0\")", key)
	}
	return filepath.Join(s.dir, name), nil
}

// unregister releases the region name of kind, or every region of kind
// when name is empty; an unknown name (or one of the other kind) is an
// error.
func (s *sharedMemory) unregister(kind regionKind, name string) error {
	if s == nil {
		return errShmOff
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if name == "" {
		var errs []error
		for n, r := range s.regions {
			if r.kind == kind {
				delete(s.regions, n)
				errs = append(errs, r.release())
			}
		}
		return errors.Join(errs...)
	}
	r, ok := s.regions[name]
	if !ok || r.kind != kind {
		return fmt.Errorf("%w: no %s %q", errShmUnknown, kind, name)
	}
	delete(s.regions, name)
	return r.release()
}

// release unmaps a system region or closes a CUDA one.
func (r *shmRegion) release() error {
	if r.dev != nil {
		return r.dev.Close()
	}
	return unix.Munmap(r.mapping)
}

// status lists the region name of kind, or every region of kind by name
// when name is empty.
func (s *sharedMemory) status(kind regionKind, name string) ([]shmRegion, error) {
	if s == nil {
		return nil, errShmOff
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []shmRegion
	for n, r := range s.regions {
		if r.kind == kind && (name == "" || n == name) {
			out = append(out, shmRegion{Name: r.Name, Key: r.Key, Offset: r.Offset, ByteSize: r.ByteSize, DeviceID: r.DeviceID, kind: r.kind})
		}
	}
	if name != "" && len(out) == 0 {
		return nil, fmt.Errorf("%w: no %s %q", errShmUnknown, kind, name)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// region is the region name, once size bytes at offset are checked to fit
// it (read lock held by the caller).
func (s *sharedMemory) region(name string, offset, size int64) (*shmRegion, error) {
	r, ok := s.regions[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", errShmUnknown, name)
	}
	if offset < 0 || size < 0 || offset+size > r.ByteSize || offset+size < offset {
		return nil, fmt.Errorf("%d bytes at offset %d do not fit region %q (%d bytes)", size, offset, name, r.ByteSize)
	}
	return r, nil
}

// ReadRegion implements kserve.SharedMemory: a copy of the bytes.
func (s *sharedMemory) ReadRegion(region string, offset, size int64) (out []byte, err error) {
	if s.maxRead != nil {
		if most := s.maxRead(); size > most {
			return nil, fmt.Errorf("%d bytes from region %q are above limits.max_request_body (%d bytes)", size, region, most)
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, err := s.region(region, offset, size)
	if err != nil {
		return nil, err
	}
	if r.dev != nil {
		out = make([]byte, size)
		if err := r.dev.ReadAt(out, offset); err != nil {
			return nil, fmt.Errorf("read region %q: %w", region, err)
		}
		return out, nil
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultAsError(region, &err)
	return append([]byte(nil), r.mem[offset:offset+size]...), nil
}

// faultAsError turns a fault while touching a mapped region into an error
// (with debug.SetPanicOnFault on for the copy): a client that shrinks its
// object after registering it leaves pages that fault on access (SIGBUS),
// which would otherwise stop the daemon. Deferred after SetPanicOnFault, so
// it runs before the setting is restored.
func faultAsError(region string, err *error) {
	if r := recover(); r != nil {
		// A fault's run-time error carries the faulting address.
		fault, ok := r.(interface {
			runtime.Error
			Addr() uintptr
		})
		if !ok {
			panic(r)
		}
		*err = fmt.Errorf("region %q can no longer be read or written (was its shared-memory object shrunk?): fault at %#x", region, fault.Addr())
	}
}

// write puts data at offset in the region; room is the byte size the
// request gave the output there, which data must not exceed.
func (s *sharedMemory) write(region string, offset, room int64, data []byte) (err error) {
	if s == nil {
		return errShmOff
	}
	if int64(len(data)) > room {
		return fmt.Errorf("the output takes %d bytes but shared_memory_byte_size gives it %d", len(data), room)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, err := s.region(region, offset, int64(len(data)))
	if err != nil {
		return err
	}
	if r.dev != nil {
		if err := r.dev.WriteAt(data, offset); err != nil {
			return fmt.Errorf("write region %q: %w", region, err)
		}
		return nil
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultAsError(region, &err)
	copy(r.mem[offset:], data)
	return nil
}

// clientsAllowed says whether clients may register regions now.
func (s *sharedMemory) clientsAllowed() bool { return s.allowed == nil || s.allowed() }

// close releases every region (the daemon stops, or a reload turned
// allow_client_shm off).
func (s *sharedMemory) close() {
	if s != nil {
		_ = s.unregister(systemRegion, "")
		_ = s.unregister(cudaRegion, "")
	}
}
