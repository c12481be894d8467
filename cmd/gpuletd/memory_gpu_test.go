//go:build gpu

package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/modelzoo"
)

// TestGPUStatusShowsExecutorMemory serves lenet5 on the NVIDIA GPU (whole,
// without MPS, so that it runs where nvidia-cuda-mps-control is missing) and
// reads the status: its executor's GPU memory, as the driver lists it for
// the executor's process, and its resident memory. It skips without a
// driver.
func TestGPUStatusShowsExecutorMemory(t *testing.T) {
	if !haveNVIDIADriver() {
		t.Skip("no NVIDIA driver on this machine")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 3))
	addr, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_DEVICES=nvidia", "GPULETD_PARTITIONING_BACKEND=none"))
	base := "http://" + addr
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/models/lenet5/ready", nil, nil).code == 200 },
		5*time.Minute, time.Second, "logs:\n%s", logs)
	var st struct {
		Gpulets []struct {
			ID     string       `json:"id"`
			Memory *adminMemory `json:"memory"`
		} `json:"gpulets"`
	}
	require.NoError(t, json.Unmarshal(do(t, "GET", base+"/api/v1/status", nil, nil).body, &st))
	require.NotEmpty(t, st.Gpulets)
	for _, g := range st.Gpulets {
		require.NotNil(t, g.Memory, g.ID)
		t.Logf("%s: %d bytes of GPU memory, %d resident", g.ID, g.Memory.DeviceBytes, g.Memory.HostBytes)
		require.Greater(t, g.Memory.DeviceBytes, int64(1<<20), "%s: a CUDA context holds MiBs of GPU memory", g.ID)
		require.Greater(t, g.Memory.HostBytes, int64(1<<20), g.ID)
	}
}
