//go:build gpu

package mps

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// These tests need an NVIDIA GPU with its driver (go test -tags gpu ./mps/).
// They skip when NVML cannot be initialised or nvidia-cuda-mps-control is
// not installed. They read the GPUs and run an MPS control daemon of their
// own in a temporary pipe directory; they never change MIG or compute modes.

func realNVML(t *testing.T) nvml.Interface {
	t.Helper()
	lib := nvml.New()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		t.Skipf("no usable NVML: %v", ret)
	}
	t.Cleanup(func() { lib.Shutdown() })
	return lib
}

func TestGPUDiscover(t *testing.T) {
	lib := realNVML(t)
	devs, err := Discover(lib, zaptest.NewLogger(t))
	require.NoError(t, err)
	require.NotEmpty(t, devs)
	for _, d := range devs {
		t.Logf("%s: %s (%s) %s cc %s, %d of %d MiB free, MIG %+v, utilisation %+v, %d processes",
			d.ID, d.Name, d.Type, d.UUID, d.ComputeCapability, d.MemoryFree>>20, d.MemoryTotal>>20, d.MIG, d.Utilization, len(d.Processes))
		require.Equal(t, HealthOK, d.Health, d.HealthDetail)
		require.True(t, strings.HasPrefix(d.UUID, "GPU-"), d.UUID)
		require.NotEmpty(t, d.Name)
		require.NotZero(t, d.MemoryTotal)
		require.LessOrEqual(t, d.MemoryFree, d.MemoryTotal)
		require.Regexp(t, `^\d+\.\d+$`, d.ComputeCapability)
		if d.MIG != nil {
			for _, in := range d.MIG.Instances {
				require.True(t, strings.HasPrefix(in.UUID, "MIG-"), in.UUID)
			}
		}
	}
}

func mpsControl(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("nvidia-cuda-mps-control")
	if err != nil {
		t.Skip("nvidia-cuda-mps-control is not installed")
	}
	return path
}

func TestGPUMPSControlDaemon(t *testing.T) {
	lib := realNVML(t)
	bin := mpsControl(t)
	devs, err := Discover(lib, zaptest.NewLogger(t))
	require.NoError(t, err)
	require.NotEmpty(t, devs)
	if devs[0].MIG != nil && devs[0].MIG.Enabled {
		t.Skip("GPU 0 is in MIG mode")
	}
	root, err := os.MkdirTemp("", "gpuletd-mps")
	require.NoError(t, err)
	defer os.RemoveAll(root)

	ctx := context.Background()
	d := NewControlDaemon(ControlConfig{
		DeviceID: devs[0].ID, Binary: bin, PipeDir: root + "/pipe", LogDir: root + "/log",
		VisibleDevices: devs[0].UUID, QueryTimeout: 10 * time.Second, StartTimeout: 30 * time.Second,
	}, ExecRunner{}, zaptest.NewLogger(t))
	require.NoError(t, d.Start(ctx))
	defer d.Quit(ctx)

	servers, err := d.Query(ctx, "get_server_list")
	require.NoError(t, err)
	t.Logf("servers: %q", servers)
	_, err = d.Query(ctx, "set_default_active_thread_percentage 40")
	require.NoError(t, err)
	pct, err := d.Query(ctx, "get_default_active_thread_percentage")
	require.NoError(t, err)
	require.Contains(t, pct, "40")

	require.NoError(t, d.Quit(ctx))
	require.Error(t, d.Ping(ctx), "the daemon is gone after quit")
}

func TestGPUManager(t *testing.T) {
	lib := realNVML(t)
	bin := mpsControl(t)
	root, err := os.MkdirTemp("", "gpuletd-rt")
	require.NoError(t, err)
	defer os.RemoveAll(root)
	m, err := New(Options{
		Spec: Spec{Mode: ModeNVIDIA, RuntimeDir: root, MPS: MPSSpec{ControlBinary: bin, HealthInterval: 200 * time.Millisecond}},
		NVML: lib, Logger: zaptest.NewLogger(t),
	})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, m.Start(ctx))
	defer m.Close(ctx)
	inv := m.Inventory()
	var id string
	for _, d := range inv.Devices {
		t.Logf("%s: %s backend %s sizes %v health %s %s", d.ID, d.Name, d.Backend, d.Sizes, d.Health, d.HealthDetail)
		if d.Backend == BackendMPS && id == "" {
			require.Equal(t, HealthOK, d.Health, d.HealthDetail)
			require.Equal(t, MPSRunning, d.MPS.State)
			id = d.ID
		}
	}
	if id == "" {
		t.Skip("no GPU partitioned with MPS")
	}
	l, err := m.Lease(Gpulet{ID: "t", Device: id, Size: 40})
	require.NoError(t, err)
	defer l.Release()
	require.Contains(t, l.Env(), "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=40")
	require.NoError(t, m.Close(ctx))
}

// TestGPUXidEventsAreWatched registers the real GPUs for Xid events as the
// manager does and waits once: with no fault, the wait times out. A
// machine where NVML refuses the registration (some containers) logs it.
func TestGPUXidEventsAreWatched(t *testing.T) {
	lib := realNVML(t)
	set, ret := lib.EventSetCreate()
	require.Equal(t, nvml.SUCCESS, ret, "create event set: %v", ret)
	defer set.Free()
	dev, ret := lib.DeviceGetHandleByIndex(0)
	require.Equal(t, nvml.SUCCESS, ret)
	if ret := dev.RegisterEvents(nvml.EventTypeXidCriticalError, set); ret != nvml.SUCCESS {
		t.Skipf("Xid events cannot be registered here: %v", ret)
	}
	_, ret = set.Wait(50)
	require.Equal(t, nvml.ERROR_TIMEOUT, ret, "no Xid while nothing faults")
}
