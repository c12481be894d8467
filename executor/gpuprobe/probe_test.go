package gpuprobe

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/internal/fakeep"
)

// childEnv makes the test binary act as the probe child: it runs the probe
// (or misbehaves as told) instead of the tests.
const childEnv = "GPUPROBE_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		goleak.VerifyTestMain(m)
	case "probe":
		lib, _ := onnxrt.FindLibrary("")
		_ = json.NewEncoder(os.Stdout).Encode(Probe(context.Background(), Options{Library: lib, Provider: os.Getenv("GPUPROBE_PROVIDER"), ProviderDir: os.Getenv("GPUPROBE_DIR")}))
		os.Exit(0)
	case "crash":
		fmt.Fprintln(os.Stderr, "libcuda: fatal driver error")
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Second)
	case "hang":
		time.Sleep(time.Minute)
	case "silent":
		os.Exit(3)
	}
	os.Exit(0)
}

func devLibrary(t *testing.T) string {
	t.Helper()
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err, "tests need the library: make deps")
	return lib
}

func TestProbe(t *testing.T) {
	lib := devLibrary(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	fakeep.Build(t, missing, onnxrt.CUDAProviderLibrary, fakeep.MissingDependency)
	failing := filepath.Join(dir, "failing")
	fakeep.Build(t, failing, onnxrt.CUDAProviderLibrary, fakeep.Failing)

	// The whole path, on the one provider every machine has: the model
	// runs and equals the CPU's.
	r := Probe(context.Background(), Options{Library: lib, Provider: "cpu"})
	require.True(t, r.OK, r.Error)
	require.Equal(t, "1.29.0", r.ONNXRuntime)
	require.Zero(t, r.MaxAbsDiff)
	require.NotEmpty(t, r.Devices)

	r = Probe(context.Background(), Options{Library: lib, Provider: "cuda", ProviderDir: missing})
	require.False(t, r.OK)
	require.Equal(t, fakeep.MissingLibrary, r.MissingLibrary)
	require.Contains(t, r.Fix, "install")
	require.Contains(t, r.Error, fakeep.MissingLibrary+": cannot open shared object file")

	r = Probe(context.Background(), Options{Library: lib, Provider: "cuda", ProviderDir: failing})
	require.False(t, r.OK)
	require.Contains(t, r.Error, fakeep.Message)
	require.Empty(t, r.MissingLibrary)

	r = Probe(context.Background(), Options{Library: filepath.Join(dir, "nope.so"), Provider: "cuda"})
	require.False(t, r.OK)
	require.Contains(t, r.Error, "does not exist")
}

func TestSpawn(t *testing.T) {
	dir := t.TempDir()
	failing := filepath.Join(dir, "failing")
	fakeep.Build(t, failing, onnxrt.CUDAProviderLibrary, fakeep.Failing)
	bin, err := os.Executable()
	require.NoError(t, err)
	lib := devLibrary(t)
	tests := []struct {
		name    string
		env     []string
		timeout time.Duration
		ok      bool
		want    string
	}{
		{name: "runs", env: []string{childEnv + "=probe", "GPUPROBE_PROVIDER=cpu"}, ok: true},
		{name: "provider fails", env: []string{childEnv + "=probe", "GPUPROBE_PROVIDER=cuda", "GPUPROBE_DIR=" + failing}, want: fakeep.Message},
		{name: "crash", env: []string{childEnv + "=crash"}, want: "the child process crashed: signal: killed: libcuda: fatal driver error"},
		{name: "hang", env: []string{childEnv + "=hang"}, timeout: 300 * time.Millisecond, want: "the child process did not finish in 300ms"},
		{name: "silent", env: []string{childEnv + "=silent"}, want: "the child process crashed: exit status 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Spawn(context.Background(), SpawnOptions{Binary: bin, Env: tt.env, Timeout: tt.timeout,
				Options: Options{Library: lib, Provider: "cuda"}})
			require.Equal(t, tt.ok, r.OK, r.Error)
			require.Contains(t, r.Error, tt.want)
		})
	}
}
