package cudart

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeIPCRuntime builds testdata/fakeipc.c, a libcudart whose IPC handles
// name POSIX shared-memory objects.
func fakeIPCRuntime(t *testing.T) string {
	t.Helper()
	lib := filepath.Join(t.TempDir(), "libcudart.so.13")
	out, err := exec.Command("cc", "-shared", "-fPIC", "-o", lib, "testdata/fakeipc.c", "-lrt").CombinedOutput()
	require.NoError(t, err, string(out))
	return lib
}

// fakeHandle makes a shared-memory object of size bytes and the handle the
// fake runtime opens it by.
func fakeHandle(t *testing.T, size int) ([]byte, string) {
	t.Helper()
	name := "gpuletd-cudart-test-" + filepath.Base(t.TempDir())
	file := filepath.Join("/dev/shm", name)
	require.NoError(t, os.WriteFile(file, make([]byte, size), 0o600))
	t.Cleanup(func() { _ = os.Remove(file) })
	h := make([]byte, HandleSize)
	copy(h, "/"+name)
	return h, file
}

func TestOpenedMemoryCopiesBothWays(t *testing.T) {
	lib := fakeIPCRuntime(t)
	h, file := fakeHandle(t, 64)
	m, err := OpenIPC(lib, 0, h)
	require.NoError(t, err)

	require.NoError(t, m.WriteAt([]byte("tensor"), 10))
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, "tensor", string(raw[10:16]), "the bytes land in the owner's memory")

	require.NoError(t, os.WriteFile(file, append([]byte("answer"), make([]byte, 58)...), 0o600))
	got := make([]byte, 6)
	require.NoError(t, m.ReadAt(got, 0))
	require.Equal(t, "answer", string(got))

	require.ErrorContains(t, m.ReadAt(make([]byte, 8), 60), "invalid argument", "past the allocation: the runtime's error")
	require.NoError(t, m.Close())
	require.ErrorIs(t, m.ReadAt(got, 0), ErrClosed)
	require.ErrorIs(t, m.Close(), ErrClosed)
}

func TestOpenIPCErrors(t *testing.T) {
	lib := fakeIPCRuntime(t)
	h, _ := fakeHandle(t, 64)
	for _, tc := range []struct {
		name   string
		lib    string
		device int
		handle []byte
		want   string
	}{
		{"short handle", lib, 0, h[:10], "it has 10 bytes, a CUDA IPC handle 64"},
		{"negative device", lib, -1, h, "device -1 is negative"},
		{"no such device", lib, 1, h, "select the device: invalid device ordinal"},
		{"unknown handle", lib, 0, make([]byte, HandleSize), "open the IPC handle: invalid device context"},
		{"no library", filepath.Join(t.TempDir(), "libcudart.so.13"), 0, h, "cannot open shared object file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenIPC(tc.lib, tc.device, tc.handle)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// Memory allocated here is shared by its handle: another opening of the
// handle sees what was written, and Close frees it.
func TestAllocatedMemoryIsSharedByItsHandle(t *testing.T) {
	lib := fakeIPCRuntime(t)
	owned, err := Alloc(lib, 0, 64)
	require.NoError(t, err)
	require.NoError(t, owned.WriteAt([]byte("input"), 8))
	h, err := owned.Handle()
	require.NoError(t, err)
	require.Len(t, h, HandleSize)

	opened, err := OpenIPC(lib, 0, h)
	require.NoError(t, err)
	got := make([]byte, 5)
	require.NoError(t, opened.ReadAt(got, 8))
	require.Equal(t, "input", string(got))
	_, err = opened.Handle()
	require.ErrorContains(t, err, "the memory was opened from one")
	require.NoError(t, opened.Close())
	require.NoError(t, owned.Close())
	_, err = owned.Handle()
	require.ErrorIs(t, err, ErrClosed)

	_, err = Alloc(lib, 0, 0)
	require.ErrorContains(t, err, "size 0 is not positive")
	_, err = Alloc(lib, 2, 64)
	require.ErrorContains(t, err, "invalid device ordinal")
}
