package cudart

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeRuntime builds a stand-in for libcudart with the given answers.
func fakeRuntime(t *testing.T, count, sms int, rc int) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "fake.c")
	code := `#include <stddef.h>
int cudaGetDeviceCount(int* n) { *n = COUNT; return 0; }
int cudaDeviceGetAttribute(int* v, int attr, int dev) { if (attr != 16 || dev != 0) return 1; *v = SMS; return RC; }
int cudaMemGetInfo(size_t* f, size_t* t) { *f = 1000; *t = 4000; return 0; }
const char* cudaGetErrorString(int rc) { return rc == 2 ? "out of memory" : "invalid value"; }
`
	require.NoError(t, os.WriteFile(src, []byte(code), 0o644))
	lib := filepath.Join(dir, "libcudart.so.13")
	out, err := exec.Command("cc", "-shared", "-fPIC", "-o", lib,
		"-DCOUNT="+strconv.Itoa(count), "-DSMS="+strconv.Itoa(sms), "-DRC="+strconv.Itoa(rc), src).CombinedOutput()
	require.NoError(t, err, string(out))
	return lib
}

func TestQuery(t *testing.T) {
	d, err := Query(fakeRuntime(t, 1, 66, 0))
	require.NoError(t, err)
	require.Equal(t, Device{Visible: 1, SMCount: 66, MemoryFree: 1000, MemoryTotal: 4000}, d)

	_, err = Query(fakeRuntime(t, 0, 66, 0))
	require.ErrorIs(t, err, ErrNoDevice)

	_, err = Query(fakeRuntime(t, 1, 66, 2))
	require.EqualError(t, err, "query CUDA device: out of memory")

	_, err = Query(filepath.Join(t.TempDir(), "libcudart.so.13"))
	require.ErrorContains(t, err, "cannot open shared object file")
}
