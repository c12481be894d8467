package profiler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { testbin.Cleanup() }))
}

// openStore opens a fresh store for one test.
func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "gpuletd.db"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	return st
}

// shaOf is a stand-in for a model file's sha256.
func shaOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// cpuDevice is a two-core CPU device as mps describes it.
func cpuDevice() mps.Device {
	return mps.Device{ID: "cpu", Kind: mps.KindCPU, Name: "test CPU", Type: "cpu", Cores: []int{0, 1},
		Backend: mps.BackendCPU, Sizes: []int{50, 100}, MaxGpulets: 2, Health: mps.HealthOK}
}

// emulatedDevice is an emulated GPU of a reference set.
func emulatedDevice(set string) mps.Device {
	return mps.Device{ID: "emu0", Kind: mps.KindEmulated, Name: "Emulated " + set, Type: set, Emulated: set,
		Backend: mps.BackendMPS, Sizes: []int{20, 40, 50, 60, 80, 100}, MaxGpulets: 2, Health: mps.HealthOK, MemoryTotal: 16 << 30}
}

// fastRule samples a fake point quickly and deterministically.
func fastRule() StopRule {
	return StopRule{Warmup: 1, MinSamples: 10, MaxSamples: 40, MaxTime: time.Minute, MedianCI: 0.05, P99CI: 0.5}
}

// testModel is a batching model with a stand-in hash.
func testModel(name string) Model {
	return Model{Name: name, Path: "/models/" + name + "/1/model.onnx", SHA256: shaOf(name), SLOMS: 50, MaxBatchSize: 32}
}
