package cudart

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeProfilerRuntime builds a libcudart stand-in whose cudaProfilerStart
// and cudaProfilerStop return rc; without withStop it lacks cudaProfilerStop.
func fakeProfilerRuntime(t *testing.T, rc string, withStop bool) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "fake.c")
	code := `int cudaProfilerStart(void) { return RC; }
#ifdef WITH_STOP
int cudaProfilerStop(void) { return RC; }
#endif
const char* cudaGetErrorString(int rc) { return rc == 5 ? "profiler disabled" : "unknown"; }
`
	require.NoError(t, os.WriteFile(src, []byte(code), 0o644))
	lib := filepath.Join(dir, "libcudart.so.13")
	args := []string{"-shared", "-fPIC", "-o", lib, "-DRC=" + rc, src}
	if withStop {
		args = append(args, "-DWITH_STOP")
	}
	out, err := exec.Command("cc", args...).CombinedOutput()
	require.NoError(t, err, string(out))
	return lib
}

func TestProfilerStartStop(t *testing.T) {
	tests := []struct {
		name     string
		rc       string
		withStop bool
		startErr string
		stopErr  string
	}{
		{name: "both succeed", rc: "0", withStop: true},
		{name: "runtime refuses", rc: "5", withStop: true, startErr: "start CUDA profiler: profiler disabled", stopErr: "stop CUDA profiler: profiler disabled"},
		{name: "stop missing", rc: "0", stopErr: "the library lacks cudaProfilerStart, cudaProfilerStop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib := fakeProfilerRuntime(t, tt.rc, tt.withStop)
			check := func(err error, want string) {
				if want == "" {
					require.NoError(t, err)
					return
				}
				require.ErrorContains(t, err, want)
			}
			check(ProfilerStart(lib), tt.startErr)
			check(ProfilerStop(lib), tt.stopErr)
		})
	}
}

func TestProfilerNoLibrary(t *testing.T) {
	err := ProfilerStart(filepath.Join(t.TempDir(), "libcudart.so.13"))
	require.ErrorContains(t, err, "start CUDA profiler")
}
