package mps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// testMPSSpec is an MPS spec with the fake control program and fast timings.
func testMPSSpec(f fakeMPS) MPSSpec {
	return MPSSpec{
		ControlBinary: fakeControl, HealthInterval: 20 * time.Millisecond, QueryTimeout: 2 * time.Second,
		StartTimeout: 5 * time.Second, BackoffMin: 10 * time.Millisecond, BackoffMax: time.Second,
	}
}

func TestManagerMPS(t *testing.T) {
	for _, setMode := range []bool{false, true} {
		t.Run(fmt.Sprintf("set_compute_mode=%v", setMode), func(t *testing.T) {
			f := newFakeMPS(t)
			s, mocks := newServer(t, gpus.H100_SXM5_80GB, 2)
			ms := testMPSSpec(f)
			ms.SetComputeMode = setMode
			m, err := New(Options{
				Spec:   Spec{Mode: ModeNVIDIA, RuntimeDir: f.root, MPS: ms},
				NVML:   s,
				Logger: zap.NewNop(),
			})
			require.NoError(t, err)
			ctx := context.Background()
			require.NoError(t, m.Start(ctx))
			require.NoError(t, m.Start(ctx), "a second Start does nothing")

			starts := f.records(t, "start")
			require.Len(t, starts, 2)
			for i, g := range mocks {
				pipe := filepath.Join(f.root, "mps", fmt.Sprintf("gpu%d", i), "pipe")
				logDir := filepath.Join(f.root, "mps", fmt.Sprintf("gpu%d", i), "log")
				require.Contains(t, starts, "start -d CUDA_VISIBLE_DEVICES="+g.UUID+" CUDA_MPS_PIPE_DIRECTORY="+pipe+" CUDA_MPS_LOG_DIRECTORY="+logDir)
				if setMode {
					require.Equal(t, []nvml.ComputeMode{nvml.COMPUTEMODE_EXCLUSIVE_PROCESS}, g.modeSets)
				} else {
					require.Empty(t, g.modeSets, "the compute mode is never touched by default")
				}
			}

			inv := m.Inventory()
			for _, d := range inv.Devices {
				require.Equal(t, HealthOK, d.Health)
				require.NotNil(t, d.MPS)
				require.Equal(t, MPSRunning, d.MPS.State)
				require.Equal(t, d.MPSPipeDir, d.MPS.PipeDir)
			}

			// 48 MPS clients per GPU; the 49th is refused; a release makes room.
			var leases []*Lease
			for i := range MaxMPSClients {
				l, err := m.Lease(Gpulet{ID: fmt.Sprint("g", i), Device: "gpu0", Size: 50})
				require.NoError(t, err)
				leases = append(leases, l)
			}
			_, err = m.Lease(Gpulet{ID: "g48", Device: "gpu0", Size: 50})
			require.ErrorIs(t, err, ErrMPSClientLimit)
			require.ErrorContains(t, err, "48 MPS clients already")
			other, err := m.Lease(Gpulet{ID: "h0", Device: "gpu1", Size: 50})
			require.NoError(t, err, "the limit is per GPU")
			require.Equal(t, MaxMPSClients, m.Inventory().Devices[0].Leased)
			leases[0].Release()
			leases[0].Release() // twice is harmless
			l, err := m.Lease(Gpulet{ID: "g48", Device: "gpu0", Size: 50})
			require.NoError(t, err)
			require.Contains(t, l.Env(), "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50")
			require.Contains(t, l.Env(), "CUDA_VISIBLE_DEVICES="+mocks[0].UUID)
			require.Contains(t, l.Env(), "CUDA_MPS_PIPE_DIRECTORY="+filepath.Join(f.root, "mps", "gpu0", "pipe"))
			other.Release()

			require.NoError(t, m.Close(ctx))
			require.NoError(t, m.Close(ctx), "a second Close does nothing")
			require.Equal(t, 2, f.count(t, "cmd quit"))
			require.Equal(t, 2, f.count(t, "quit"))
			if setMode {
				for _, g := range mocks {
					require.Equal(t, []nvml.ComputeMode{nvml.COMPUTEMODE_EXCLUSIVE_PROCESS, nvml.COMPUTEMODE_DEFAULT}, g.modeSets, "restored on close")
				}
			}
			_, err = m.Lease(Gpulet{ID: "late", Device: "gpu0", Size: 50})
			require.ErrorIs(t, err, ErrClosed)
			for _, d := range m.Inventory().Devices {
				require.Equal(t, MPSStopped, d.MPS.State)
				require.Equal(t, HealthFailed, d.Health)
			}
		})
	}
}

func TestManagerMPSDaemonDies(t *testing.T) {
	f := newFakeMPS(t)
	s, _ := newServer(t, gpus.A100_SXM4_40GB, 1)
	core, logs := observer.New(zapcore.InfoLevel)
	m, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, RuntimeDir: f.root, MPS: testMPSSpec(f)}, NVML: s, Logger: zap.New(core)})
	require.NoError(t, err)
	f.set(t, "die-after", "300ms")
	require.NoError(t, m.Start(context.Background()))
	eventually(t, func() bool {
		st := m.Inventory().Devices[0].MPS
		return st.Restarts == 1 && st.State == MPSRunning
	}, "restarted")
	require.Equal(t, 1, logs.FilterMessage("MPS control daemon does not answer; restarting it").Len())
	require.Equal(t, 1, logs.FilterMessage("MPS control daemon restarted").Len())

	// While restarts fail, the device is degraded and says why.
	f.set(t, "fail-start", "")
	_, err = newTestDaemon(t, f, "x", func(c *ControlConfig) { c.PipeDir = m.Inventory().Devices[0].MPSPipeDir }).Query(context.Background(), "quit")
	require.NoError(t, err)
	eventually(t, func() bool { return m.Inventory().Devices[0].Health == HealthDegraded }, "degraded")
	require.Contains(t, m.Inventory().Devices[0].HealthDetail, "MPS control daemon is being restarted")
	f.clear(t, "fail-start")
	eventually(t, func() bool { return m.Inventory().Devices[0].Health == HealthOK }, "healthy again")
	require.NoError(t, m.Close(context.Background()))
}

// A GPU that NVML says is lost (fallen off the bus) or waits for a reset,
// while the daemon runs, fails for good: the inventory says why and what
// to do, leases are refused, and it stays failed when NVML answers again.
func TestManagerLostGPUFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		ret  nvml.Return
		why  string
	}{
		{"fallen off the bus", nvml.ERROR_GPU_IS_LOST, "the GPU is lost, fallen off the bus"},
		{"waiting for a reset", nvml.ERROR_RESET_REQUIRED, "the GPU needs a reset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeMPS(t)
			s, mocks := newServer(t, gpus.H100_SXM5_80GB, 2)
			core, logs := observer.New(zapcore.InfoLevel)
			m, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, RuntimeDir: f.root, MPS: testMPSSpec(f)}, NVML: s, Logger: zap.New(core)})
			require.NoError(t, err)
			ctx := context.Background()
			require.NoError(t, m.Start(ctx))
			defer func() { require.NoError(t, m.Close(ctx)) }()
			for _, d := range m.Inventory().Devices {
				require.Equal(t, HealthOK, d.Health)
			}

			answer := mocks[1].GetMemoryInfoFunc
			mocks[1].GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, tc.ret }
			inv := m.Inventory()
			require.Equal(t, HealthOK, inv.Devices[0].Health, "the other GPU serves on")
			lost := inv.Devices[1]
			require.Equal(t, HealthFailed, lost.Health)
			require.Contains(t, lost.HealthDetail, tc.why)
			require.Contains(t, lost.HealthDetail, "until it is reset (nvidia-smi -r) or the host rebooted")
			require.Equal(t, 1, logs.FilterMessage("NVIDIA GPU lost").Len())
			_, err = m.Lease(Gpulet{ID: "g", Device: "gpu1", Size: 50})
			require.ErrorIs(t, err, ErrBadGpulet)
			require.ErrorContains(t, err, tc.why)

			mocks[1].GetMemoryInfoFunc = answer
			require.Equal(t, HealthFailed, m.Inventory().Devices[1].Health, "lost until the GPU is reset")
			require.Equal(t, 1, logs.FilterMessage("NVIDIA GPU lost").Len(), "said once")
		})
	}
}

// Memory rows waiting to be remapped (after uncorrectable errors) degrade a
// GPU until they are remapped; a remapping that failed fails it for good.
func TestManagerRowRemapping(t *testing.T) {
	f := newFakeMPS(t)
	s, mocks := newServer(t, gpus.A100_SXM4_40GB, 1)
	var unc int
	var pending, failed bool
	mocks[0].GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, unc, pending, failed, nvml.SUCCESS }
	m, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, RuntimeDir: f.root, MPS: testMPSSpec(f)}, NVML: s, Logger: zap.NewNop()})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, m.Start(ctx))
	defer func() { require.NoError(t, m.Close(ctx)) }()
	require.Equal(t, HealthOK, m.Inventory().Devices[0].Health)

	unc, pending = 2, true
	d := m.Inventory().Devices[0]
	require.Equal(t, HealthDegraded, d.Health)
	require.Equal(t, "memory rows wait to be remapped after uncorrectable memory errors (2 rows so far): reset the GPU (nvidia-smi -r) when nothing runs on it", d.HealthDetail)
	_, err = m.Lease(Gpulet{ID: "g", Device: "gpu0", Size: 50})
	require.NoError(t, err, "a degraded GPU still serves")

	pending = false
	require.Equal(t, HealthOK, m.Inventory().Devices[0].Health, "remapped")

	failed = true
	d = m.Inventory().Devices[0]
	require.Equal(t, HealthFailed, d.Health)
	require.Contains(t, d.HealthDetail, "a memory row remapping failed")
	failed = false
	require.Equal(t, HealthFailed, m.Inventory().Devices[0].Health, "for good")
}

func TestManagerStartFailures(t *testing.T) {
	t.Run("runtime directory not usable", func(t *testing.T) {
		f := newFakeMPS(t)
		s, _ := newServer(t, gpus.A100_SXM4_40GB, 2)
		rt := filepath.Join(f.root, "runtime")
		require.NoError(t, os.WriteFile(rt, []byte("a file"), 0o644))
		m, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, RuntimeDir: rt, MPS: testMPSSpec(f)}, NVML: s})
		require.NoError(t, err)
		err = m.Start(context.Background())
		require.ErrorIs(t, err, ErrPipeDir)
		require.ErrorContains(t, err, filepath.Join(rt, "mps", "gpu0", "pipe"))
		require.Empty(t, f.records(t), "nothing was run")
		require.NoError(t, m.Close(context.Background()))
	})
	t.Run("second daemon fails: the first is stopped", func(t *testing.T) {
		f := newFakeMPS(t)
		s, mocks := newServer(t, gpus.A100_SXM4_40GB, 2)
		ms := testMPSSpec(f)
		ms.SetComputeMode = true
		m, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, RuntimeDir: f.root, MPS: ms}, NVML: s})
		require.NoError(t, err)
		// The second GPU's log directory is in the way.
		require.NoError(t, os.MkdirAll(filepath.Join(f.root, "mps", "gpu1"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(f.root, "mps", "gpu1", "log"), nil, 0o644))
		err = m.Start(context.Background())
		require.ErrorIs(t, err, ErrPipeDir)
		require.ErrorContains(t, err, "log directory")
		require.Empty(t, f.records(t, "start"))
		require.Empty(t, mocks[0].modeSets)

		// The daemon itself fails for gpu1: gpu0's is quit and its mode restored.
		require.NoError(t, os.Remove(filepath.Join(f.root, "mps", "gpu1", "log")))
		m2, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, RuntimeDir: f.root, MPS: ms}, NVML: s})
		require.NoError(t, err)
		mocks[1].SetComputeModeFunc = func(nvml.ComputeMode) nvml.Return { return nvml.ERROR_NO_PERMISSION }
		err = m2.Start(context.Background())
		require.ErrorIs(t, err, ErrNVML)
		require.ErrorContains(t, err, "ERROR_NO_PERMISSION")
		require.Equal(t, 1, f.count(t, "start"))
		require.Equal(t, 1, f.count(t, "cmd quit"))
		require.Equal(t, []nvml.ComputeMode{nvml.COMPUTEMODE_EXCLUSIVE_PROCESS, nvml.COMPUTEMODE_DEFAULT}, mocks[0].modeSets)
		require.NoError(t, m2.Close(context.Background()))
		require.NoError(t, m.Close(context.Background()))
	})
}

func TestManagerExistingDaemon(t *testing.T) {
	f := newFakeMPS(t)
	owner := newTestDaemon(t, f, "shared", nil)
	require.NoError(t, owner.Start(context.Background()))
	pipe, _ := f.dirs("shared")
	s, mocks := newServer(t, gpus.A100_SXM4_40GB, 2)
	ms := testMPSSpec(f)
	ms.PipeDirectory = pipe
	m, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, MPS: ms}, NVML: s})
	require.NoError(t, err)
	require.NoError(t, m.Start(context.Background()))
	l, err := m.Lease(Gpulet{ID: "a", Device: "gpu1", Size: 30})
	require.NoError(t, err)
	require.Contains(t, l.Env(), "CUDA_MPS_PIPE_DIRECTORY="+pipe)
	require.Contains(t, l.Env(), "CUDA_VISIBLE_DEVICES="+mocks[1].UUID)
	for _, d := range m.Inventory().Devices {
		require.True(t, d.MPS.Existing)
	}
	require.NoError(t, m.Close(context.Background()))
	require.Equal(t, 1, f.count(t, "start"), "gpuletd started none")
	require.Zero(t, f.count(t, "cmd quit"), "and stopped none")
	require.NoError(t, owner.Ping(context.Background()))
	require.NoError(t, owner.Quit(context.Background()))
}

func TestManagerWithoutNVML(t *testing.T) {
	missing := nvml.New(nvml.WithLibraryPath("/nonexistent/libnvidia-ml.so.1"))
	failing := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }}
	panicking := &mock.Interface{} // Init is not set: the mock panics
	tests := []struct {
		name   string
		lib    nvml.Interface
		reason string
	}{
		{"no libnvidia-ml.so.1", missing, "ERROR_LIBRARY_NOT_FOUND"},
		{"Init fails", failing, "ERROR_DRIVER_NOT_LOADED"},
		{"Init panics", panicking, "panicked"},
		{"no library given", nil, "no NVML library given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.InfoLevel)
			m, err := New(Options{Spec: Spec{Mode: ModeAuto}, NVML: tt.lib, Logger: zap.New(core), CPUs: []int{0, 1}})
			require.NoError(t, err)
			require.Equal(t, []string{"cpu"}, m.Inventory().IDs())
			require.Equal(t, 1, logs.FilterMessage("no NVIDIA GPU: serving on the CPU").Len())
			if tt.lib != nil {
				warn := logs.FilterMessage("NVML unavailable: no NVIDIA GPU will be used (is the NVIDIA driver installed? libnvidia-ml.so.1 must be loadable)").All()
				require.Len(t, warn, 1)
				require.Contains(t, fmt.Sprint(warn[0].ContextMap()["error"]), tt.reason)
			}
			require.NoError(t, m.Start(context.Background()))
			require.NoError(t, m.Close(context.Background()))

			_, err = New(Options{Spec: Spec{Mode: ModeNVIDIA, RuntimeDir: "/r"}, NVML: tt.lib, Logger: zap.NewNop(), CPUs: []int{0}})
			require.ErrorIs(t, err, ErrNoNVIDIA)
			require.ErrorContains(t, err, tt.reason)
		})
	}
	// A spec without GPUs never touches NVML.
	m, err := New(Options{Spec: Spec{Mode: ModeCPU}, NVML: panicking, CPUs: []int{0}})
	require.NoError(t, err)
	require.NoError(t, m.Close(context.Background()))
}

func TestManagerShutsNVMLDown(t *testing.T) {
	s, _ := newServer(t, gpus.A100_SXM4_40GB, 1)
	inits, shutdowns := 0, 0
	s.InitFunc = func() nvml.Return { inits++; return nvml.SUCCESS }
	s.ShutdownFunc = func() nvml.Return { shutdowns++; return nvml.SUCCESS }
	m, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, Backend: BackendNone}, NVML: s})
	require.NoError(t, err)
	require.NoError(t, m.Close(context.Background()))
	require.Equal(t, 1, inits)
	require.Equal(t, 1, shutdowns)

	// A spec error after Init shuts NVML down too.
	_, err = New(Options{Spec: Spec{Mode: ModeNVIDIA, Backend: BackendNone, Sizes: []int{50}}, NVML: s})
	require.ErrorIs(t, err, ErrInvalidSpec)
	require.Equal(t, 2, shutdowns)
}

func TestManagerCPULeases(t *testing.T) {
	m, err := New(Options{Spec: Spec{Mode: ModeCPU}, CPUs: []int{0, 1}})
	require.NoError(t, err)
	defer m.Close(context.Background())

	a, err := m.Lease(Gpulet{ID: "a", Device: "cpu", Size: 50})
	require.NoError(t, err)
	b, err := m.Lease(Gpulet{ID: "b", Device: "cpu", Size: 50})
	require.NoError(t, err)
	require.Equal(t, []int{0}, a.Gpulet().Cores)
	require.Equal(t, []int{1}, b.Gpulet().Cores)
	require.Contains(t, a.Env(), "GPULETD_CPU_CORES=0")
	require.Contains(t, b.Env(), "GPULETD_CPU_CORES=1")
	require.Contains(t, b.Env(), "GPULETD_INTRA_OP_THREADS=1")

	_, err = m.Lease(Gpulet{ID: "c", Device: "cpu", Size: 50})
	require.ErrorContains(t, err, "not enough free cores")
	// A profile measured while the node serves shares the serving cores.
	p, err := m.Lease(Gpulet{ID: "p", Device: "cpu", Size: 100, Shared: true})
	require.NoError(t, err)
	require.Equal(t, []int{0, 1}, p.Gpulet().Cores)
	p.Release()
	_, err = m.Lease(Gpulet{ID: "c", Device: "cpu", Size: 50})
	require.ErrorContains(t, err, "not enough free cores", "a shared lease let go of no one's cores")
	_, err = m.Lease(Gpulet{ID: "c", Device: "cpu", Size: 20})
	require.ErrorContains(t, err, "maps to no whole core")
	_, err = m.Lease(Gpulet{ID: "c", Device: "cpu", Size: 50, Cores: []int{0}})
	require.ErrorIs(t, err, ErrBadGpulet)
	_, err = m.Lease(Gpulet{ID: "c", Device: "gpu0", Size: 50})
	require.ErrorIs(t, err, ErrUnknownDevice)

	a.Release()
	c, err := m.Lease(Gpulet{ID: "c", Device: "cpu", Size: 50})
	require.NoError(t, err)
	require.Equal(t, []int{0}, c.Gpulet().Cores)
	require.Equal(t, 2, m.Inventory().Devices[0].Leased)
}

// A CPU gpu-let resized while it alone serves its models starts over the
// old one (TakeOver): it takes a core the old one holds, and keeps it when
// the old one's lease is given back.
func TestManagerCPULeaseTakesOver(t *testing.T) {
	m, err := New(Options{Spec: Spec{Mode: ModeCPU}, CPUs: []int{0, 1}})
	require.NoError(t, err)
	defer m.Close(context.Background())

	old, err := m.Lease(Gpulet{ID: "old", Device: "cpu", Size: 100})
	require.NoError(t, err)
	_, err = m.Lease(Gpulet{ID: "new", Device: "cpu", Size: 50})
	require.ErrorContains(t, err, "not enough free cores", "beside the old one")
	_, err = m.Lease(Gpulet{ID: "new", Device: "cpu", Size: 50, TakeOver: []string{"another"}})
	require.ErrorContains(t, err, "not enough free cores", "over a gpu-let that holds no core")
	nw, err := m.Lease(Gpulet{ID: "new", Device: "cpu", Size: 50, TakeOver: []string{"old"}})
	require.NoError(t, err)
	require.Equal(t, []int{1}, nw.Gpulet().Cores, "the old one's highest core")
	require.Contains(t, nw.Env(), "GPULETD_CPU_CORES=1")

	old.Release()
	free, err := m.Lease(Gpulet{ID: "c", Device: "cpu", Size: 50})
	require.NoError(t, err)
	require.Equal(t, []int{0}, free.Gpulet().Cores, "the old one gave back only the core it kept")
	_, err = m.Lease(Gpulet{ID: "d", Device: "cpu", Size: 50})
	require.ErrorContains(t, err, "not enough free cores", "the new one holds core 1")
	nw.Release()
	free.Release()
	_, err = m.Lease(Gpulet{ID: "e", Device: "cpu", Size: 100})
	require.NoError(t, err)
}

func TestManagerEmulatedLeases(t *testing.T) {
	m, err := New(Options{Spec: Spec{Mode: ModeList, Entries: []Entry{{Kind: KindEmulated, Profiles: "igniter-v100", Count: 2, MemoryGB: 16}}}, CPUs: []int{0}})
	require.NoError(t, err)
	defer m.Close(context.Background())
	require.NoError(t, m.Start(context.Background()), "emulated devices need no MPS daemon")
	for _, size := range []int{7, 33, 60, 100} {
		l, err := m.Lease(Gpulet{ID: "e", Device: "emu1", Size: size})
		require.NoError(t, err)
		require.Contains(t, l.Env(), "GPULETD_EMULATED_DEVICE=igniter-v100")
		require.Contains(t, l.Env(), fmt.Sprintf("GPULETD_GPULET_SIZE=%d", size))
		require.Contains(t, l.Env(), "CUDA_VISIBLE_DEVICES=")
		l.Release()
	}
}

// TestCPUGpuletPinsTheExecutor starts an executor-like child with the
// environment of two 50% CPU gpu-lets and checks, in /proc, that every thread
// of each child may run on its own core only.
func TestCPUGpuletPinsTheExecutor(t *testing.T) {
	m, err := New(Options{Spec: Spec{Mode: ModeCPU}})
	require.NoError(t, err)
	defer m.Close(context.Background())
	cores := m.Inventory().Devices[0].Cores
	n := min(len(cores), 2)
	var seen []string
	for i := range n {
		size := 100 / len(cores)
		if len(cores) >= 2 {
			size = 50 // two gpu-lets of half the machine each
		}
		l, err := m.Lease(Gpulet{ID: fmt.Sprint("g", i), Device: "cpu", Size: size})
		require.NoError(t, err)
		defer l.Release()
		pid, stop := startChild(t, l.Env())
		want := cpushareList(l.Gpulet().Cores)
		for _, got := range allowedCPUs(t, pid) {
			require.Equal(t, want, got, "thread of pid %d", pid)
		}
		stop()
		seen = append(seen, want)
	}
	if n == 2 {
		require.NotEqual(t, seen[0], seen[1], "the two gpu-lets have disjoint cores")
	}
}

func cpushareList(cores []int) string {
	// Linux writes ranges; compare with a range-aware form of the same set.
	if len(cores) == 0 {
		return ""
	}
	out := ""
	for i := 0; i < len(cores); {
		j := i
		for j+1 < len(cores) && cores[j+1] == cores[j]+1 {
			j++
		}
		if out != "" {
			out += ","
		}
		if j > i {
			out += fmt.Sprintf("%d-%d", cores[i], cores[j])
		} else {
			out += fmt.Sprint(cores[i])
		}
		i = j + 1
	}
	return out
}
