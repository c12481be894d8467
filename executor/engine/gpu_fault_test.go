//go:build gpu

package engine

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/cudart"
)

// faultChildEnv marks the test's own process run again to fault its GPU:
// a faulted context stays so for the process's life, so the fault happens
// in a child and the tests after it keep a working device.
const faultChildEnv = "GPULETD_TEST_DEVICE_FAULT_CHILD"

// TestGPUContextFaultIsFound faults the device under ONNX Runtime's CUDA
// provider and checks what an executor asks after a failed run: the
// context answers healthy before, and a *cudart.ContextError after, for
// good, while runs fail.
func TestGPUContextFaultIsFound(t *testing.T) {
	requireGPU(t)
	if os.Getenv(faultChildEnv) == "1" {
		faultTheDevice(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGPUContextFaultIsFound$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), faultChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "context fault found: cudaError", string(out))
	t.Logf("%s", out)
}

func faultTheDevice(t *testing.T) {
	initORT(t)
	gpu, err := NewORT(ORTOptions{Provider: ProviderCUDA, IntraOpThreads: 1, DisableSpinning: true, FixedShapes: true, MemoryLimit: 2 << 30})
	require.NoError(t, err)
	// Not closed: its sessions hold a context that failed.
	path := zooModel(t, "lenet5")
	_, err = FixedBatch(context.Background(), gpu, "lenet5", path, 4)
	require.NoError(t, err)
	require.NoError(t, cudart.CheckContext(""), "a context that runs")

	require.NoError(t, injectDeviceFault(cudart.Library))
	err = cudart.CheckContext("")
	ce, ok := errors.AsType[*cudart.ContextError](err)
	require.True(t, ok, "want a *cudart.ContextError, got %v", err)
	t.Logf("context fault found: %v", ce)

	_, err = FixedBatch(context.Background(), gpu, "lenet5", path, 4)
	require.Error(t, err, "a run on the failed context")
	t.Logf("a run after it: %v", err)
	again, ok := errors.AsType[*cudart.ContextError](cudart.CheckContext(""))
	require.True(t, ok, "the fault stays")
	require.Equal(t, ce.Code, again.Code)
}
