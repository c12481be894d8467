package mps

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// discovered returns n mock GPUs as Discover sees them; mig lists the
// indexes of GPUs to put in MIG mode (with one 7g instance).
func discovered(t *testing.T, cfg gpus.Config, n int, mig ...int) []Device {
	t.Helper()
	s, mocks := newServer(t, cfg, n)
	for _, i := range mig {
		mocks[i].enableMIG(t, [2]int{nvml.GPU_INSTANCE_PROFILE_7_SLICE, 0})
	}
	devs, err := Discover(s, zap.NewNop())
	require.NoError(t, err)
	return devs
}

func TestBuildInventory(t *testing.T) {
	two := discovered(t, gpus.A100_SXM4_40GB, 2)
	migGPU := discovered(t, gpus.A100_SXM4_40GB, 2, 1)
	h100 := discovered(t, gpus.H100_SXM5_80GB, 1, 0)
	rt := "/run/gpuletd"
	cpus := []int{0, 1}
	noLib := errors.New("init NVML: ERROR_LIBRARY_NOT_FOUND")

	type want struct {
		ids      []string
		backends []Backend
		sizes    [][]int
		max      []int
	}
	tests := []struct {
		name    string
		spec    Spec
		src     Sources
		want    want
		wantErr []error
		errMsg  string
		logMsg  string
	}{
		{
			name: "auto with GPUs: MPS with the default sizes",
			spec: Spec{Mode: ModeAuto, RuntimeDir: rt},
			src:  Sources{GPUs: two, CPUs: cpus},
			want: want{ids: []string{"gpu0", "gpu1"}, backends: []Backend{BackendMPS, BackendMPS},
				sizes: [][]int{DefaultMPSSizes, DefaultMPSSizes}, max: []int{2, 2}},
		},
		{
			name:   "auto without GPUs: the CPU, said in the log",
			spec:   Spec{Mode: ModeAuto, RuntimeDir: rt},
			src:    Sources{GPUsErr: noLib, CPUs: cpus},
			want:   want{ids: []string{"cpu"}, backends: []Backend{BackendCPU}, sizes: [][]int{{50, 100}}, max: []int{2}},
			logMsg: "no NVIDIA GPU: serving on the CPU",
		},
		{
			name:    "nvidia without GPUs is an error with the reason",
			spec:    Spec{Mode: ModeNVIDIA, RuntimeDir: rt},
			src:     Sources{GPUsErr: noLib, CPUs: cpus},
			wantErr: []error{ErrNoNVIDIA},
			errMsg:  "ERROR_LIBRARY_NOT_FOUND",
		},
		{
			name:   "cpu: configured sizes become what whole cores make",
			spec:   Spec{Mode: ModeCPU, Sizes: []int{20, 40, 50, 60, 80, 100}},
			src:    Sources{GPUs: two, CPUs: cpus},
			want:   want{ids: []string{"cpu"}, backends: []Backend{BackendCPU}, sizes: [][]int{{50, 100}}, max: []int{2}},
			logMsg: "CPU gpu-let sizes below one core dropped",
		},
		{
			name:    "cpu: no size maps to a whole core",
			spec:    Spec{Mode: ModeCPU, Sizes: []int{10, 20}},
			src:     Sources{CPUs: cpus},
			wantErr: []error{ErrInvalidSpec},
			errMsg:  "partitioning.sizes",
		},
		{
			name:    "cpu: no cores",
			spec:    Spec{Mode: ModeCPU},
			src:     Sources{},
			wantErr: []error{ErrInvalidSpec},
		},
		{
			name: "list: GPUs by index and UUID prefix, the CPU, emulated GPUs",
			spec: Spec{Mode: ModeList, RuntimeDir: rt, Sizes: []int{30, 70, 100}, MaxGpuletsPerGPU: 3, Entries: []Entry{
				{Kind: KindNVIDIA, GPUs: []string{"1", two[0].UUID[:12]}},
				{Kind: KindCPU},
				{Kind: KindEmulated, Profiles: "igniter-v100", Count: 2, MemoryGB: 16},
			}},
			src: Sources{GPUs: two, CPUs: cpus},
			want: want{ids: []string{"gpu1", "gpu0", "cpu", "emu0", "emu1"},
				backends: []Backend{BackendMPS, BackendMPS, BackendCPU, BackendMPS, BackendMPS},
				sizes:    [][]int{{30, 70, 100}, {30, 70, 100}, {50, 100}, {30, 70, 100}, {30, 70, 100}},
				max:      []int{3, 3, 2, 3, 3}},
		},
		{
			name:    "list: a GPU that does not exist",
			spec:    Spec{Mode: ModeList, RuntimeDir: rt, Entries: []Entry{{Kind: KindNVIDIA, GPUs: []string{"0", "7"}}}},
			src:     Sources{GPUs: two, CPUs: cpus},
			wantErr: []error{ErrInvalidSpec},
			errMsg:  `check devices[0].gpus[1] "7": invalid device specification: no such NVIDIA GPU (found 2: 0 GPU-`,
		},
		{
			name:    "list: a UUID prefix that matches two GPUs",
			spec:    Spec{Mode: ModeList, RuntimeDir: rt, Entries: []Entry{{Kind: KindNVIDIA, GPUs: []string{"GPU-"}}}},
			src:     Sources{GPUs: two, CPUs: cpus},
			wantErr: []error{ErrInvalidSpec},
			errMsg:  "matches 2 GPUs",
		},
		{
			name:    "list: a GPU listed twice",
			spec:    Spec{Mode: ModeList, RuntimeDir: rt, Entries: []Entry{{Kind: KindNVIDIA, GPUs: []string{"0"}}, {Kind: KindNVIDIA, GPUs: []string{two[0].UUID}}}},
			src:     Sources{GPUs: two, CPUs: cpus},
			wantErr: []error{ErrInvalidSpec},
			errMsg:  "devices[1].gpus",
		},
		{
			name:    "list: nvidia entry without GPUs",
			spec:    Spec{Mode: ModeList, RuntimeDir: rt, Entries: []Entry{{Kind: KindNVIDIA}}},
			src:     Sources{GPUsErr: noLib, CPUs: cpus},
			wantErr: []error{ErrNoNVIDIA},
			errMsg:  "devices[0]",
		},
		{
			name: "mig on GPUs in MIG mode: the profile sizes",
			spec: Spec{Mode: ModeNVIDIA, Backend: BackendMIG, MaxGpuletsPerGPU: 10},
			src:  Sources{GPUs: h100, CPUs: cpus},
			want: want{ids: []string{"gpu0"}, backends: []Backend{BackendMIG}, sizes: [][]int{{14, 29, 43, 57, 100}}, max: []int{7}},
		},
		{
			name: "mig with a subset of the profile sizes",
			spec: Spec{Mode: ModeNVIDIA, Backend: BackendMIG, Sizes: []int{43, 57}},
			src:  Sources{GPUs: h100, CPUs: cpus},
			want: want{ids: []string{"gpu0"}, backends: []Backend{BackendMIG}, sizes: [][]int{{43, 57}}, max: []int{2}},
		},
		{
			name:    "mig with a size MIG cannot make",
			spec:    Spec{Mode: ModeNVIDIA, Backend: BackendMIG, Sizes: []int{43, 50}},
			src:     Sources{GPUs: h100, CPUs: cpus},
			wantErr: []error{ErrInvalidSpec},
			errMsg:  "check partitioning.sizes[1] 50: invalid device specification: MIG on gpu0 (NVIDIA H100 80GB HBM3) makes sizes [14 29 43 57 100]",
		},
		{
			name:    "mig on a GPU not in MIG mode",
			spec:    Spec{Mode: ModeNVIDIA, Backend: BackendMIG},
			src:     Sources{GPUs: migGPU, CPUs: cpus},
			wantErr: []error{ErrInvalidSpec, ErrMIGNotEnabled},
			errMsg:  "gpu0",
		},
		{
			name: "mps configured, one GPU in MIG mode: that one uses MIG",
			spec: Spec{Mode: ModeNVIDIA, RuntimeDir: rt},
			src:  Sources{GPUs: migGPU, CPUs: cpus},
			want: want{ids: []string{"gpu0", "gpu1"}, backends: []Backend{BackendMPS, BackendMIG},
				sizes: [][]int{DefaultMPSSizes, {14, 29, 43, 57, 100}}, max: []int{2, 2}},
			logMsg: "GPU is in MIG mode: partitioning it with MIG instances",
		},
		{
			name: "none: whole devices",
			spec: Spec{Mode: ModeList, Backend: BackendNone, Entries: []Entry{{Kind: KindNVIDIA}, {Kind: KindEmulated, Profiles: "x", Count: 1}, {Kind: KindCPU}}},
			src:  Sources{GPUs: two, CPUs: cpus},
			want: want{ids: []string{"gpu0", "gpu1", "emu0", "cpu"}, backends: []Backend{BackendNone, BackendNone, BackendNone, BackendCPU},
				sizes: [][]int{{100}, {100}, {100}, {100}}, max: []int{1, 1, 1, 1}},
		},
		{
			name:    "none with a partition size",
			spec:    Spec{Mode: ModeNVIDIA, Backend: BackendNone, Sizes: []int{100, 50}},
			src:     Sources{GPUs: two, CPUs: cpus},
			wantErr: []error{ErrInvalidSpec},
			errMsg:  "check partitioning.sizes[1] 50: invalid device specification: backend none",
		},
		{
			name:    "emulated devices cannot use MIG",
			spec:    Spec{Mode: ModeList, Backend: BackendMIG, Entries: []Entry{{Kind: KindEmulated, Profiles: "igniter-v100", Count: 1}}},
			src:     Sources{CPUs: cpus},
			wantErr: []error{ErrInvalidSpec},
			errMsg:  "partitioning.backend",
		},
		{
			name:    "MPS needs a runtime directory",
			spec:    Spec{Mode: ModeNVIDIA},
			src:     Sources{GPUs: two, CPUs: cpus},
			wantErr: []error{ErrInvalidSpec},
			errMsg:  "runtime_dir",
		},
		{name: "bad mode", spec: Spec{Mode: "gpu"}, wantErr: []error{ErrInvalidSpec}, errMsg: `check devices "gpu": invalid device specification`},
		{name: "entries without list mode", spec: Spec{Mode: ModeAuto, Entries: []Entry{{Kind: KindCPU}}}, wantErr: []error{ErrInvalidSpec}, errMsg: "devices"},
		{name: "empty list", spec: Spec{Mode: ModeList}, wantErr: []error{ErrInvalidSpec}, errMsg: "empty"},
		{name: "bad backend", spec: Spec{Mode: ModeCPU, Backend: "vgpu"}, wantErr: []error{ErrInvalidSpec}, errMsg: `check partitioning.backend "vgpu": invalid device specification`},
		{name: "bad size", spec: Spec{Mode: ModeCPU, Sizes: []int{50, 0}}, wantErr: []error{ErrInvalidSpec}, errMsg: "check partitioning.sizes[1] 0: invalid device specification"},
		{name: "bad gpu-let cap", spec: Spec{Mode: ModeCPU, MaxGpuletsPerGPU: 49}, wantErr: []error{ErrInvalidSpec}, errMsg: "partitioning.max_gpulets_per_gpu"},
		{name: "bad kind", spec: Spec{Mode: ModeList, Entries: []Entry{{Kind: "tpu"}}}, wantErr: []error{ErrInvalidSpec}, errMsg: `check devices[0].kind "tpu": invalid device specification`},
		{name: "emulated without set", spec: Spec{Mode: ModeList, Entries: []Entry{{Kind: KindEmulated, Count: 1}}}, wantErr: []error{ErrInvalidSpec}, errMsg: "devices[0].profiles"},
		{name: "emulated count 0", spec: Spec{Mode: ModeList, Entries: []Entry{{Kind: KindEmulated, Profiles: "a"}}}, wantErr: []error{ErrInvalidSpec}, errMsg: "check devices[0].count 0: invalid device specification"},
		{name: "emulated negative memory", spec: Spec{Mode: ModeList, Entries: []Entry{{Kind: KindEmulated, Profiles: "a", Count: 1, MemoryGB: -1}}}, wantErr: []error{ErrInvalidSpec}, errMsg: "devices[0].memory_gb"},
		{name: "emulated negative time scale", spec: Spec{Mode: ModeList, Entries: []Entry{{Kind: KindEmulated, Profiles: "a", Count: 1, TimeScale: -2}}}, wantErr: []error{ErrInvalidSpec}, errMsg: "devices[0].time_scale"},
		{name: "nvidia with a time scale", spec: Spec{Mode: ModeList, Entries: []Entry{{Kind: KindNVIDIA, TimeScale: 2}}}, wantErr: []error{ErrInvalidSpec}, errMsg: "time_scale are for emulated devices"},
		{name: "cpu twice", spec: Spec{Mode: ModeList, Entries: []Entry{{Kind: KindCPU}, {Kind: KindCPU}}}, wantErr: []error{ErrInvalidSpec}, errMsg: "devices[1].kind"},
		{name: "cpu with fields", spec: Spec{Mode: ModeList, Entries: []Entry{{Kind: KindCPU, Count: 2}}}, wantErr: []error{ErrInvalidSpec}, errMsg: "devices[0]"},
		{name: "nvidia with emulated fields", spec: Spec{Mode: ModeList, Entries: []Entry{{Kind: KindNVIDIA, Count: 2}}}, wantErr: []error{ErrInvalidSpec}, errMsg: "devices[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			inv, err := BuildInventory(tt.spec, tt.src, zap.New(core))
			if tt.wantErr != nil {
				for _, w := range tt.wantErr {
					require.ErrorIs(t, err, w)
				}
				require.ErrorContains(t, err, tt.errMsg)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want.ids, inv.IDs())
			for i, d := range inv.Devices {
				require.Equal(t, tt.want.backends[i], d.Backend, d.ID)
				require.Equal(t, tt.want.sizes[i], d.Sizes, d.ID)
				require.Equal(t, tt.want.max[i], d.MaxGpulets, d.ID)
				require.NotEqual(t, HealthFailed, d.Health, d.ID)
			}
			if tt.logMsg != "" {
				require.Equal(t, 1, logs.FilterMessage(tt.logMsg).Len(), "log %q", tt.logMsg)
			}
		})
	}
}

func TestBuildInventoryDetails(t *testing.T) {
	two := discovered(t, gpus.A100_SXM4_40GB, 2)
	spec := Spec{Mode: ModeList, RuntimeDir: "/run/g", Entries: []Entry{
		{Kind: KindNVIDIA}, {Kind: KindEmulated, Profiles: "igniter-v100", Count: 2, MemoryGB: 16}, {Kind: KindCPU},
	}}
	inv, err := BuildInventory(spec, Sources{GPUs: two, CPUs: []int{2, 3}, CPUName: "Test CPU"}, zap.NewNop())
	require.NoError(t, err)

	g0, err := inv.Device("gpu0")
	require.NoError(t, err)
	require.Equal(t, filepath.Join("/run/g", "mps", "gpu0", "pipe"), g0.MPSPipeDir)
	require.Equal(t, filepath.Join("/run/g", "mps", "gpu0", "log"), g0.MPSLogDir)
	require.Equal(t, two[0].UUID, g0.UUID)

	e0, err := inv.Device("emu0")
	require.NoError(t, err)
	e1, _ := inv.Device("emu1")
	require.Equal(t, KindEmulated, e0.Kind)
	require.Equal(t, "igniter-v100", e0.Type)
	require.Equal(t, "igniter-v100", e0.Emulated)
	require.Equal(t, uint64(16<<30), e0.MemoryTotal)
	require.Regexp(t, `^EMU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, e0.UUID)
	require.NotEqual(t, e0.UUID, e1.UUID)
	again, err := BuildInventory(spec, Sources{GPUs: two, CPUs: []int{2, 3}}, zap.NewNop())
	require.NoError(t, err)
	same, _ := again.Device("emu0")
	require.Equal(t, e0.UUID, same.UUID, "emulated UUIDs are stable")

	c, err := inv.Device("cpu")
	require.NoError(t, err)
	require.Equal(t, "Test CPU", c.Name)
	require.Equal(t, []int{2, 3}, c.Cores)

	_, err = inv.Device("gpu9")
	require.ErrorIs(t, err, ErrUnknownDevice)

	// A slower copy of the set is a device type of its own.
	require.Equal(t, 1.0, e0.LatencyScale())
	slow, err := BuildInventory(Spec{Mode: ModeList, Entries: []Entry{{Kind: KindEmulated, Profiles: "igniter-v100", Count: 1, TimeScale: 20}}}, Sources{}, zap.NewNop())
	require.NoError(t, err)
	require.Equal(t, "igniter-v100-x20", slow.Devices[0].Type)
	require.Equal(t, "igniter-v100", slow.Devices[0].Emulated)
	require.Equal(t, "Emulated igniter-v100 at 1/20 speed", slow.Devices[0].Name)
	require.Equal(t, 20.0, slow.Devices[0].TimeScale)

	// The pipe directory of an existing daemon is shared by every GPU.
	spec = Spec{Mode: ModeNVIDIA, MPS: MPSSpec{PipeDirectory: "/tmp/nvidia-mps"}}
	inv, err = BuildInventory(spec, Sources{GPUs: two}, zap.NewNop())
	require.NoError(t, err)
	for _, d := range inv.Devices {
		require.Equal(t, "/tmp/nvidia-mps", d.MPSPipeDir)
		require.Empty(t, d.MPSLogDir)
	}

	// Clone is deep.
	cl := inv.Clone()
	cl.Devices[0].Sizes[0] = 99
	require.NotEqual(t, 99, inv.Devices[0].Sizes[0])
}

func TestBuildInventoryPendingMIG(t *testing.T) {
	s, mocks := newServer(t, gpus.A100_SXM4_40GB, 1)
	mocks[0].GetMigModeFunc = func() (int, int, nvml.Return) { return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS }
	devs, err := Discover(s, zap.NewNop())
	require.NoError(t, err)
	inv, err := BuildInventory(Spec{Mode: ModeNVIDIA, RuntimeDir: "/r"}, Sources{GPUs: devs}, zap.NewNop())
	require.NoError(t, err)
	require.Equal(t, HealthDegraded, inv.Devices[0].Health)
	require.Contains(t, inv.Devices[0].HealthDetail, "MIG mode change pending")
}

// The CPU device holds the whole cores its cgroup's CPU limit pays for:
// executors pinned to more would be throttled together while the planner
// counted every core.
func TestCPUDeviceWithinTheCPULimit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		limit     float64
		wantCores []int
		wantSizes []int
		narrowed  bool
	}{
		{name: "no limit", limit: 0, wantCores: []int{4, 5, 6, 7}, wantSizes: []int{25, 50, 75, 100}},
		{name: "docker run --cpus 2", limit: 2, wantCores: []int{4, 5}, wantSizes: []int{50, 100}, narrowed: true},
		{name: "a limit of 2.5 pays for two whole cores", limit: 2.5, wantCores: []int{4, 5}, wantSizes: []int{50, 100}, narrowed: true},
		{name: "half a core still has one", limit: 0.5, wantCores: []int{4}, wantSizes: []int{100}, narrowed: true},
		{name: "a limit above the cores narrows nothing", limit: 6, wantCores: []int{4, 5, 6, 7}, wantSizes: []int{25, 50, 75, 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := BuildInventory(Spec{Mode: ModeCPU}, Sources{CPUs: []int{4, 5, 6, 7}, CPULimit: tc.limit, CPULimitOf: "/docker/ab"}, zap.NewNop())
			require.NoError(t, err)
			c, err := inv.Device("cpu")
			require.NoError(t, err)
			require.Equal(t, tc.wantCores, c.Cores)
			require.Equal(t, tc.wantSizes, c.Sizes)
			require.LessOrEqual(t, c.MaxGpulets, len(tc.wantCores))
			if tc.narrowed {
				require.Equal(t, tc.limit, c.CPULimit)
				require.Equal(t, "/docker/ab", c.CPULimitOf)
				require.Equal(t, 4, c.OnlineCores)
			} else {
				require.Zero(t, c.CPULimit)
				require.Zero(t, c.OnlineCores)
			}
		})
	}
}
