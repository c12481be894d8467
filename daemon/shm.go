package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
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
)

// shmRegion is one registered system shared-memory region: byteSize bytes at
// offset in the object key, mapped into the daemon.
type shmRegion struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	Offset   int64  `json:"offset"`
	ByteSize int64  `json:"byte_size"`

	mapping []byte // the object from 0 to offset+byteSize, for munmap
	mem     []byte // the region: mapping[offset:]
}

// sharedMemory is the registry of Triton's system shared-memory extension:
// local clients register a region of a POSIX shared-memory object and then
// place inputs (read from it) and outputs (written into it) there instead of
// in the request and the answer. Requests copy in and out under the read
// lock; unregistering takes the write lock, so no region is unmapped while
// a request uses it.
type sharedMemory struct {
	dir string // shmDir; tests may point elsewhere
	// maxRead bounds one input read out of a region, as
	// limits.max_request_body bounds a body (nil: no bound).
	maxRead func() int64

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

// objectPath is the file of the shared-memory object key: one name after
// the leading slash, nothing that leaves the directory.
func (s *sharedMemory) objectPath(key string) (string, error) {
	name, ok := strings.CutPrefix(key, "/")
	if !ok || name == "" || strings.Contains(name, "/") || name == "." || name == ".." {
		return "", fmt.Errorf("key %q is not a shared-memory object name (one name after a slash, as shm_open takes it: \"/input0\")", key)
	}
	return filepath.Join(s.dir, name), nil
}

// unregister unmaps the region name, or every region when name is empty; an
// unknown name is an error.
func (s *sharedMemory) unregister(name string) error {
	if s == nil {
		return errShmOff
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if name == "" {
		for n, r := range s.regions {
			_ = unix.Munmap(r.mapping)
			delete(s.regions, n)
		}
		return nil
	}
	r, ok := s.regions[name]
	if !ok {
		return fmt.Errorf("%w: %q", errShmUnknown, name)
	}
	delete(s.regions, name)
	return unix.Munmap(r.mapping)
}

// status lists the region name, or every region by name when name is empty.
func (s *sharedMemory) status(name string) ([]shmRegion, error) {
	if s == nil {
		return nil, errShmOff
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []shmRegion
	for n, r := range s.regions {
		if name == "" || n == name {
			out = append(out, shmRegion{Name: r.Name, Key: r.Key, Offset: r.Offset, ByteSize: r.ByteSize})
		}
	}
	if name != "" && len(out) == 0 {
		return nil, fmt.Errorf("%w: %q", errShmUnknown, name)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// span is the size bytes at offset in the region name, checked (read lock
// held by the caller).
func (s *sharedMemory) span(name string, offset, size int64) ([]byte, error) {
	r, ok := s.regions[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", errShmUnknown, name)
	}
	if offset < 0 || size < 0 || offset+size > r.ByteSize || offset+size < offset {
		return nil, fmt.Errorf("%d bytes at offset %d do not fit region %q (%d bytes)", size, offset, name, r.ByteSize)
	}
	return r.mem[offset : offset+size], nil
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
	b, err := s.span(region, offset, size)
	if err != nil {
		return nil, err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultAsError(region, &err)
	return append([]byte(nil), b...), nil
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
	b, err := s.span(region, offset, int64(len(data)))
	if err != nil {
		return err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultAsError(region, &err)
	copy(b, data)
	return nil
}

// close unmaps every region (the daemon stops).
func (s *sharedMemory) close() {
	if s != nil {
		_ = s.unregister("")
	}
}
