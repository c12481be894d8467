package daemon

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/internal/memcg"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
)

// fakeProc writes a meminfo file of total and a status file for process
// pid whose peak resident memory is peakKiB, and returns the meminfo file
// and the proc root.
func fakeProc(t *testing.T, total string, pid int, peakKiB int64) (meminfo, proc string) {
	t.Helper()
	proc = t.TempDir()
	meminfo = filepath.Join(proc, "meminfo")
	require.NoError(t, os.WriteFile(meminfo, []byte("MemTotal:       "+total+"\nMemFree:         1000 kB\n"), 0o644))
	dir := filepath.Join(proc, strconv.Itoa(pid))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	status := "Name:\tgpuletd\nVmHWM:\t" + strconv.FormatInt(peakKiB, 10) + " kB\nVmRSS:\t 1000 kB\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644))
	return meminfo, proc
}

func TestReadHostMemory(t *testing.T) {
	meminfo, proc := fakeProc(t, "25165824 kB", 42, 64<<10) // the daemon held 64 MiB at most
	for _, tc := range []struct {
		name    string
		meminfo string
		group   *memcg.Group
		want    hostMemory
		from    string
	}{
		{"the host's memory", meminfo, nil,
			hostMemory{TotalBytes: 24 << 30, DaemonBytes: 64 << 20, ModelsBytes: 24<<30 - 64<<20},
			"the host's 24 GiB less the daemon's peak of 64 MiB"},
		{"a smaller memory limit", meminfo, cgroupV2(t, "805306368", 0, 0, 0),
			hostMemory{TotalBytes: 24 << 30, LimitBytes: 768 << 20, LimitOf: "/system.slice", DaemonBytes: 64 << 20, ModelsBytes: 704 << 20},
			"gpuletd's memory limit of 768 MiB (cgroup /system.slice; MemoryMax= in a systemd unit) less the daemon's peak of 64 MiB"},
		{"a limit above the host's memory", meminfo, cgroupV2(t, strconv.FormatInt(32<<30, 10), 0, 0, 0),
			hostMemory{TotalBytes: 24 << 30, LimitBytes: 32 << 30, LimitOf: "/system.slice", DaemonBytes: 64 << 20, ModelsBytes: 24<<30 - 64<<20},
			"the host's 24 GiB less the daemon's peak of 64 MiB"},
		{"a limit alone", filepath.Join(proc, "absent"), cgroupV2(t, "805306368", 0, 0, 0),
			hostMemory{LimitBytes: 768 << 20, LimitOf: "/system.slice", DaemonBytes: 64 << 20, ModelsBytes: 704 << 20},
			"gpuletd's memory limit of 768 MiB (cgroup /system.slice; MemoryMax= in a systemd unit) less the daemon's peak of 64 MiB"},
		{"nothing to read", filepath.Join(proc, "absent"), nil,
			hostMemory{DaemonBytes: 64 << 20},
			"unbounded: neither the host's memory nor a memory limit could be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := readHostMemory(tc.meminfo, tc.group, proc, 42)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.from, got.source())
		})
	}
	require.Equal(t, float64(cpuMemoryMB), hostMemory{}.modelsMB(), "no bound: the planner's stand-in")
	require.Equal(t, 704.0, hostMemory{ModelsBytes: 704 << 20}.modelsMB())

	// A daemon holding more than the limit leaves the models a token MiB,
	// not a negative bound the planner would refuse.
	over := readHostMemory(meminfo, cgroupV2(t, "33554432", 0, 0, 0), proc, 42)
	require.Equal(t, int64(1<<20), over.ModelsBytes)

	// The executors' own memory is left out, once per executor, where it
	// was measured and a bound is known; so are executors holding it all.
	h := hostMemory{TotalBytes: 24 << 30, DaemonBytes: 64 << 20, ModelsBytes: 24<<30 - 64<<20}
	h.leaveExecutors(2, 0)
	require.Zero(t, h.Executors, "not measured")
	h.leaveExecutors(2, 52<<20)
	require.Equal(t, int64(24<<30-64<<20-104<<20), h.ModelsBytes)
	require.Equal(t, "the host's 24 GiB less the daemon's peak of 64 MiB and 2 executors' own 52 MiB each", h.source())
	unbounded := hostMemory{DaemonBytes: 64 << 20}
	unbounded.leaveExecutors(2, 52<<20)
	require.Zero(t, unbounded.ModelsBytes, "still unbounded")
	tight := hostMemory{LimitBytes: 128 << 20, DaemonBytes: 64 << 20, ModelsBytes: 64 << 20}
	tight.leaveExecutors(2, 52<<20)
	require.Equal(t, int64(1<<20), tight.ModelsBytes)
}

// The planner bounds the CPU device by what the host memory allows and
// each model by what its profile run measured; a model that fits in none
// says so, with where the bound comes from, and the models that fit are
// placed. A model's configured memory_mb wins over the measurement; a
// model measured before memory was has the file-size estimate.
func TestTheCPUsModelsAreBoundByHostMemory(t *testing.T) {
	ctx := context.Background()
	n, st, cpu := lendingNode(t)
	n.catalog = newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), st, n.events, zap.NewNop())
	n.readHost = func() hostMemory {
		return hostMemory{TotalBytes: 24 << 30, LimitBytes: 768 << 20, LimitOf: "/system.slice/gpuletd.service",
			DaemonBytes: 68 << 20, ModelsBytes: 700 << 20}
	}
	big := mlpFile("b", 28_000_000)
	big.Name, big.Version, big.Config.SLO = "vgg", 1, config.Duration(time.Second)
	small := mlpFile("c", 2_000_000)
	small.Version, small.Config.SLO = 1, config.Duration(time.Second)
	for _, m := range []struct {
		file *repository.Model
		mb   float64
	}{{big, 1438}, {small, 76}} {
		require.NoError(t, n.catalog.add(ctx, m.file))
		putProfile(t, st, m.file, cpu.Type, 2)
		require.NoError(t, st.PutModelMemory(ctx, store.ModelMemory{ModelSHA: m.file.SHA256, DeviceType: cpu.Type, ResidentMB: m.mb}))
	}

	in, missing := n.planInput(ctx, map[string]float64{"vgg": 1, "mlp": 1})
	require.Empty(t, missing)
	require.Len(t, in.GPUs, 1)
	require.Equal(t, 700.0, in.GPUs[0].MemoryMB)
	mem := map[string]float64{}
	for _, d := range in.Demands {
		mem[d.Name] = d.Profile.MemoryMB
	}
	require.Equal(t, map[string]float64{"vgg": 1438, "mlp": 76}, mem, "measured")

	plan, err := n.plan(ctx, in, n.algorithm())
	require.NoError(t, err)
	require.Equal(t, "needs 1438 MB of memory for one copy, more than any gpu-let has (cpu: 700 MB, gpuletd's memory limit "+
		"of 768 MiB (cgroup /system.slice/gpuletd.service; MemoryMax= in a systemd unit) less the daemon's peak of 68 MiB)", plan.Reasons["vgg"])
	require.NotContains(t, plan.Unscheduled, "mlp")
	n.current.Store(&planned{plan: plan})
	cm := n.cpuMemoryNow()
	require.NotNil(t, cm)
	require.Equal(t, int64(700<<20), cm.ModelsBytes)
	require.Equal(t, int64(76<<20), cm.PlacedBytes, "one executor with mlp")
	require.NoError(t, testutil.CollectAndCompare(memoryCollector{n}, strings.NewReader(`
# HELP gpuletd_cpu_models_memory_bytes `+cpuModelsMemoryHelp+`
# TYPE gpuletd_cpu_models_memory_bytes gauge
gpuletd_cpu_models_memory_bytes{kind="bound"} 7.340032e+08
gpuletd_cpu_models_memory_bytes{kind="placed"} 7.9691776e+07
`), "gpuletd_cpu_models_memory_bytes"))
	n.measureCapacity(ctx, control.Placeable(in, plan)) // as replanLocked gives it
	c := n.capacity.get()
	require.NotNil(t, c)
	mlpOnly := slices.DeleteFunc(slices.Clone(in.Demands), func(d gpulet.Demand) bool { return d.Name == "vgg" })
	require.Len(t, mlpOnly, 1)
	require.Less(t, control.PlannedLoad(gpulet.Input{Demands: mlpOnly}), control.PlannedLoad(in))
	require.Equal(t, control.PlannedLoad(gpulet.Input{Demands: mlpOnly}), c.Load, "vgg, which fits at no rate, is no load to grow")
	require.Greater(t, c.Ratio, 1.0, "mlp's capacity, not 0 for vgg")

	// memory_mb in the model's configuration wins; without a measurement,
	// the estimate from the file's size. Each says where it comes from.
	require.Equal(t, memorySourceMeasured, memorySourceOf(t, n, small, cpu))
	big.Config.MemoryMB = 500
	p, err := n.book.profile(ctx, big, cpu)
	require.NoError(t, err)
	require.Equal(t, 500.0, p.MemoryMB)
	require.Equal(t, memorySourceConfig, memorySourceOf(t, n, big, cpu))
	unmeasured := mlpFile("d", 28_000_000)
	_, err = n.book.profile(ctx, unmeasured, cpu)
	require.Error(t, err, "no profile yet")
	putProfile(t, st, unmeasured, cpu.Type, 2)
	p, err = n.book.profile(ctx, unmeasured, cpu)
	require.NoError(t, err)
	require.Equal(t, estimateMemoryMB(28_000_000, 1), p.MemoryMB)
	require.Equal(t, memorySourceEstimate, memorySourceOf(t, n, unmeasured, cpu))

	// A profile run that tells the executor's own memory apart: the model
	// counts its own memory alone per copy, and the bound leaves out the
	// executor's once per gpu-let the CPU may have (one, on one core).
	require.NoError(t, st.PutModelMemory(ctx, store.ModelMemory{ModelSHA: small.SHA256, DeviceType: cpu.Type, ResidentMB: 76, ExecutorMB: 52}))
	in, missing = n.planInput(ctx, map[string]float64{"mlp": 1})
	require.Empty(t, missing)
	require.Equal(t, 648.0, in.GPUs[0].MemoryMB)
	require.Equal(t, "gpuletd's memory limit of 768 MiB (cgroup /system.slice/gpuletd.service; MemoryMax= in a systemd unit) less the daemon's peak of 68 MiB "+
		"and an executor's own 52 MiB", in.GPUs[0].MemoryFrom)
	for _, d := range in.Demands {
		if d.Name == "mlp" {
			require.Equal(t, 24.0, d.Profile.MemoryMB, "the model's own memory")
		}
	}
	require.Equal(t, 1, n.hostMem.Load().Executors, "kept for the status")
}

// memorySourceOf is where the memory the planner counts for m on d comes
// from, as the model's profile document says it.
func memorySourceOf(t *testing.T, n *node, m *repository.Model, d mps.Device) string {
	t.Helper()
	_, from, err := n.book.profileAndMemory(context.Background(), m, d)
	require.NoError(t, err)
	return from
}
