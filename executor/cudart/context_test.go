package cudart

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeContextRuntime builds a stand-in for libcudart whose
// cudaGetLastError answers lastRC once (then 0: the runtime clears the
// error it reports) and whose cudaDeviceSynchronize answers that error
// while it is not cleared, else syncRC.
func fakeContextRuntime(t *testing.T, lastRC, syncRC int) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "fake.c")
	code := `static int last = LAST;
int cudaGetLastError(void) { int rc = last; last = 0; return rc; }
int cudaDeviceSynchronize(void) { return last ? last : SYNC; }
const char* cudaGetErrorName(int rc) { return rc == 700 ? "cudaErrorIllegalAddress" : "cudaErrorInvalidValue"; }
const char* cudaGetErrorString(int rc) { return rc == 700 ? "an illegal memory access was encountered" : "invalid argument"; }
`
	require.NoError(t, os.WriteFile(src, []byte(code), 0o644))
	lib := filepath.Join(dir, "libcudart.so.13")
	out, err := exec.Command("cc", "-shared", "-fPIC", "-o", lib,
		"-DLAST="+strconv.Itoa(lastRC), "-DSYNC="+strconv.Itoa(syncRC), src).CombinedOutput()
	require.NoError(t, err, string(out))
	return lib
}

func TestCheckContext(t *testing.T) {
	for _, tc := range []struct {
		name           string
		lastRC, syncRC int
		want           *ContextError
	}{
		{name: "healthy", lastRC: 0, syncRC: 0},
		// An error a call made alone (an argument it refused) is the
		// last error once; the context still runs work.
		{name: "an error of one call is cleared", lastRC: 1, syncRC: 0},
		{name: "an illegal address holds the context", lastRC: 700, syncRC: 700,
			want: &ContextError{Code: 700, Name: "cudaErrorIllegalAddress", Text: "an illegal memory access was encountered"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckContext(fakeContextRuntime(t, tc.lastRC, tc.syncRC))
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.Equal(t, tc.want, err)
			require.EqualError(t, err, "cudaErrorIllegalAddress (CUDA error 700): an illegal memory access was encountered")
		})
	}
}

func TestCheckContextWithoutTheCalls(t *testing.T) {
	// The query's stand-in lacks the calls: no verdict, an error that is
	// not a *ContextError.
	err := CheckContext(fakeRuntime(t, 1, 66, 0))
	require.ErrorContains(t, err, "check CUDA context: the library lacks cudaGetLastError")
	var ce *ContextError
	require.NotErrorAs(t, err, &ce)

	err = CheckContext(filepath.Join(t.TempDir(), "libcudart.so.13"))
	require.ErrorContains(t, err, "cannot open shared object file")
	require.NotErrorAs(t, err, &ce)
}
