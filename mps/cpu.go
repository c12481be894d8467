package mps

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/mps/cpushare"
)

// CPUType is the CPU device's type, under which its profiles and the
// memory of its models are stored.
const CPUType = "cpu"

// cpuDevice describes the CPU as one device cut into whole-core gpu-lets,
// on the cores of src.CPUs that its CPU limit pays for (withinLimit).
// A configured size is kept as the size its whole cores really make (60% of
// 2 cores is 1 core, 50%); sizes below one core are dropped with a log line,
// and an error names the field when no size is left.
func cpuDevice(spec Spec, src Sources, field string, log *zap.Logger) (Device, error) {
	cores := src.CPUs
	if len(cores) == 0 {
		return Device{}, invalid(field, "cpu", "this process may run on no CPU core")
	}
	name := src.CPUName
	if name == "" {
		name = "CPU"
	}
	var limited bool
	if cores, limited = withinLimit(cores, src.CPULimit); limited {
		log.Info("CPU device narrowed to the cgroup's CPU limit", zap.Float64("limit_cpus", src.CPULimit),
			zap.String("cgroup", src.CPULimitOf), zap.Int("cores", len(cores)), zap.Int("online_cores", len(src.CPUs)))
	}
	n := len(cores)
	d := Device{
		ID: "cpu", Kind: KindCPU, Name: name, Type: CPUType, Cores: slices.Clone(cores),
		Backend: BackendCPU, MaxGpulets: min(spec.maxGpulets(), n), Health: HealthOK,
	}
	if limited {
		d.CPULimit, d.CPULimitOf, d.OnlineCores = src.CPULimit, src.CPULimitOf, len(src.CPUs)
	}
	if spec.backend() == BackendNone {
		if err := onlyWhole(spec.Sizes, "partitioning.sizes"); err != nil {
			return Device{}, err
		}
		d.Sizes, d.MaxGpulets = []int{100}, 1
		return d, nil
	}
	want := spec.Sizes
	if len(want) == 0 {
		for k := 1; k <= n; k++ {
			want = append(want, cpushare.SizeOf(k, n))
		}
	}
	var dropped []int
	for _, s := range want {
		k, err := cpushare.CoresForSize(s, n)
		if err != nil {
			dropped = append(dropped, s)
			continue
		}
		d.Sizes = append(d.Sizes, cpushare.SizeOf(k, n))
	}
	slices.Sort(d.Sizes)
	d.Sizes = slices.Compact(d.Sizes)
	if len(dropped) > 0 {
		log.Info("CPU gpu-let sizes below one core dropped", zap.Ints("sizes", dropped), zap.Int("cores", n),
			zap.Int("smallest_size", cpushare.MinSize(n)))
	}
	if len(d.Sizes) == 0 {
		return Device{}, invalid("partitioning.sizes", fmt.Sprint(spec.Sizes), "none maps to a whole core of %d (smallest size: %d%%)", n, cpushare.MinSize(n))
	}
	return d, nil
}

// cpuModelName reads the CPU's model name from /proc/cpuinfo; "" if unknown.
func cpuModelName() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return tidyCPUName(v)
		}
	}
	return ""
}

// cpuNameNoise is what /proc/cpuinfo's model names carry that says nothing
// of the part: trademark signs, the clock, "CPU" and "Processor".
var cpuNameNoise = regexp.MustCompile(`(?i)\((r|tm)\)|\s@\s*[\d.]+\s*[gm]hz|\b(cpu|processor)\b`)

// tidyCPUName is a model name without cpuNameNoise, as a status table shows
// it: "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz" is "Intel Xeon Gold 6248".
func tidyCPUName(name string) string {
	if tidy := strings.Join(strings.Fields(cpuNameNoise.ReplaceAllString(name, " ")), " "); tidy != "" {
		return tidy
	}
	return strings.TrimSpace(name)
}

// withinLimit is the first of cores that a CPU limit of limit CPUs pays
// for in full (at least one), and whether that is fewer than all of them.
// Executors pinned to more cores than the limit pays for would be
// throttled together, each batch slower than profiled, while the planner
// counted every core; the cores left out still run the daemon and the
// executors' other threads, within the same limit.
func withinLimit(cores []int, limit float64) ([]int, bool) {
	if limit <= 0 {
		return cores, false
	}
	// 1e-9: a limit of 2 read as 1.9999999999 is two cores.
	k := max(1, int(math.Floor(limit+1e-9)))
	if k >= len(cores) {
		return cores, false
	}
	return cores[:k], true
}
