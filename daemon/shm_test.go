package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/cudart"
)

// The registry maps regions of shared-memory objects, reads and writes
// within their bounds only, and refuses keys outside its directory.
func TestSharedMemoryRegistry(t *testing.T) {
	dir := t.TempDir()
	obj := make([]byte, 64)
	for i := range obj {
		obj[i] = byte(i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "obj"), obj, 0o600))
	s := newSharedMemory(dir)
	defer s.close()

	require.NoError(t, s.register("in", "/obj", 16, 32))
	require.ErrorIs(t, s.register("in", "/obj", 0, 8), errShmExists)
	for _, key := range []string{"obj", "/", "/../etc/passwd", "/a/b", "/.."} {
		require.ErrorIs(t, s.register("k", key, 0, 8), errShmBad, key)
	}
	require.ErrorIs(t, s.register("big", "/obj", 60, 8), errShmBad, "past the object's end")
	require.ErrorIs(t, s.register("none", "/missing", 0, 8), errShmBad)
	require.ErrorIs(t, s.register("zero", "/obj", 0, 0), errShmBad)

	got, err := s.ReadRegion("in", 4, 4)
	require.NoError(t, err)
	require.Equal(t, []byte{20, 21, 22, 23}, got, "offset within the region, which starts at 16")
	_, err = s.ReadRegion("in", 30, 4)
	require.ErrorContains(t, err, `4 bytes at offset 30 do not fit region "in" (32 bytes)`)
	_, err = s.ReadRegion("out", 0, 4)
	require.ErrorIs(t, err, errShmUnknown)

	require.NoError(t, s.write("in", 0, 4, []byte{9, 9}))
	file, err := os.ReadFile(filepath.Join(dir, "obj"))
	require.NoError(t, err)
	require.Equal(t, []byte{9, 9, 18}, file[16:19], "written through to the object")
	require.ErrorContains(t, s.write("in", 0, 1, []byte{9, 9}), "the output takes 2 bytes but shared_memory_byte_size gives it 1")

	st, err := s.status(systemRegion, "")
	require.NoError(t, err)
	require.Equal(t, []shmRegion{{Name: "in", Key: "/obj", Offset: 16, ByteSize: 32}}, st)
	_, err = s.status(systemRegion, "other")
	require.ErrorIs(t, err, errShmUnknown)

	require.ErrorIs(t, s.unregister(systemRegion, "other"), errShmUnknown)
	require.NoError(t, s.unregister(systemRegion, "in"))
	_, err = s.ReadRegion("in", 0, 1)
	require.ErrorIs(t, err, errShmUnknown)
	st, err = s.status(systemRegion, "")
	require.NoError(t, err)
	require.Empty(t, st)

	s.maxRead = func() int64 { return 4 }
	require.NoError(t, s.register("in", "/obj", 0, 64))
	_, err = s.ReadRegion("in", 0, 8)
	require.ErrorContains(t, err, "8 bytes from region \"in\" are above limits.max_request_body (4 bytes)")

	var off *sharedMemory
	require.ErrorIs(t, off.register("a", "/obj", 0, 1), errShmOff)
	require.ErrorIs(t, off.write("a", 0, 1, []byte{1}), errShmOff)
}

// A client that shrinks its object after registering it leaves pages that
// fault when touched: the request gets an error, the daemon lives on.
func TestSharedMemoryShrunkUnderARegionIsAnError(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "obj")
	require.NoError(t, os.WriteFile(file, make([]byte, 3*os.Getpagesize()), 0o600))
	s := newSharedMemory(dir)
	defer s.close()
	require.NoError(t, s.register("r", "/obj", 0, int64(3*os.Getpagesize())))
	require.NoError(t, os.Truncate(file, 0))

	_, err := s.ReadRegion("r", int64(2*os.Getpagesize()), 8)
	require.ErrorContains(t, err, `region "r" can no longer be read or written`)
	err = s.write("r", int64(2*os.Getpagesize()), 8, []byte{1})
	require.ErrorContains(t, err, `region "r" can no longer be read or written`)
}

// Requests copy in and out while regions come and go: a region is never
// unmapped under a copy (the race detector and the mapping both check).
func TestSharedMemoryConcurrentUse(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "obj"), make([]byte, 4096), 0o600))
	s := newSharedMemory(dir)
	defer s.close()
	require.NoError(t, s.register("r", "/obj", 0, 4096))
	done := make(chan struct{})
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if _, err := s.ReadRegion("r", int64(w*512), 512); err != nil && !errors.Is(err, errShmUnknown) {
					errs <- err
					return
				}
				if err := s.write("r", int64(w*512), 512, make([]byte, 512)); err != nil && !errors.Is(err, errShmUnknown) {
					errs <- err
					return
				}
			}
		}()
	}
	for range 200 {
		require.NoError(t, s.unregister(systemRegion, "r"))
		require.NoError(t, s.register("r", "/obj", 0, 4096))
	}
	close(done)
	for range 4 {
		require.NoError(t, <-errs)
	}
}

// fakeDevice stands in for a CUDA region's device memory (cudart.Memory
// on a GPU): host bytes, bounds checked as the runtime checks a copy.
type fakeDevice struct {
	mem    []byte
	closed bool
}

func (d *fakeDevice) ReadAt(dst []byte, offset int64) error {
	if offset+int64(len(dst)) > int64(len(d.mem)) {
		return errors.New("invalid argument")
	}
	copy(dst, d.mem[offset:])
	return nil
}

func (d *fakeDevice) WriteAt(src []byte, offset int64) error {
	if offset+int64(len(src)) > int64(len(d.mem)) {
		return errors.New("invalid argument")
	}
	copy(d.mem[offset:], src)
	return nil
}

func (d *fakeDevice) Close() error {
	d.closed = true
	return nil
}

// CUDA regions share the system regions' namespace, are listed and
// unregistered apart from them, copy within their bounds through the
// device memory, and are closed when unregistered.
func TestSharedMemoryCUDARegions(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "obj"), make([]byte, 64), 0o600))
	s := newSharedMemory(dir)
	require.ErrorIs(t, s.registerCUDA("g", 0, make([]byte, cudart.HandleSize), 8), errShmOff, "no CUDA runtime: not served")

	devices := map[string]*fakeDevice{}
	s.openCUDA = func(device int, handle []byte) (deviceMemory, error) {
		if device != 0 {
			return nil, errors.New("select the device: invalid device ordinal")
		}
		d := &fakeDevice{mem: make([]byte, 32)}
		devices[string(handle[:4])] = d
		return d, nil
	}
	handle := func(tag string) []byte { return append([]byte(tag), make([]byte, cudart.HandleSize-len(tag))...) }
	require.NoError(t, s.register("sys", "/obj", 0, 64))
	require.NoError(t, s.registerCUDA("gpu", 0, handle("gpu0"), 32))
	require.ErrorIs(t, s.registerCUDA("sys", 0, handle("gpu1"), 8), errShmExists, "one namespace for both kinds")
	for _, tc := range []struct {
		name   string
		device int64
		handle []byte
		size   int64
		want   string
	}{
		{"short handle", 0, make([]byte, 10), 8, "raw_handle has 10 bytes, a CUDA IPC handle (cudaIpcGetMemHandle) 64"},
		{"negative device", -1, handle("gpu2"), 8, "device_id -1 is not a device"},
		{"no such device", 3, handle("gpu2"), 8, "invalid device ordinal"},
		{"no size", 0, handle("gpu2"), 0, "byte_size 0 must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.registerCUDA("bad", tc.device, tc.handle, tc.size)
			require.ErrorIs(t, err, errShmBad)
			require.ErrorContains(t, err, tc.want)
		})
	}

	require.NoError(t, s.write("gpu", 4, 8, []byte{1, 2, 3}))
	require.Equal(t, []byte{0, 1, 2, 3, 0}, devices["gpu0"].mem[3:8], "written to the device")
	got, err := s.ReadRegion("gpu", 5, 2)
	require.NoError(t, err)
	require.Equal(t, []byte{2, 3}, got)
	_, err = s.ReadRegion("gpu", 30, 4)
	require.ErrorContains(t, err, `4 bytes at offset 30 do not fit region "gpu" (32 bytes)`)

	cuda, err := s.status(cudaRegion, "")
	require.NoError(t, err)
	require.Equal(t, []shmRegion{{Name: "gpu", ByteSize: 32, kind: cudaRegion}}, cuda)
	sys, err := s.status(systemRegion, "")
	require.NoError(t, err)
	require.Len(t, sys, 1)
	_, err = s.status(cudaRegion, "sys")
	require.ErrorIs(t, err, errShmUnknown)
	require.ErrorIs(t, s.unregister(cudaRegion, "sys"), errShmUnknown, "the CUDA extension does not unregister a system region")

	require.NoError(t, s.unregister(cudaRegion, ""))
	require.True(t, devices["gpu0"].closed)
	_, err = s.ReadRegion("gpu", 0, 1)
	require.ErrorIs(t, err, errShmUnknown)
	_, err = s.ReadRegion("sys", 0, 1)
	require.NoError(t, err, "unregistering every CUDA region leaves the system ones")

	require.NoError(t, s.registerCUDA("gpu", 0, handle("gpu3"), 32))
	s.close()
	require.True(t, devices["gpu3"].closed, "the daemon's stop closes CUDA regions")

	// The handle opens outside the lock: a region registered under the same
	// name meanwhile wins, and the opened memory is closed again.
	opener := s.openCUDA
	s.openCUDA = func(device int, h []byte) (deviceMemory, error) {
		require.NoError(t, s.register("race", "/obj", 0, 8))
		return opener(device, h)
	}
	require.ErrorIs(t, s.registerCUDA("race", 0, handle("gpu4"), 32), errShmExists)
	require.True(t, devices["gpu4"].closed)
}
