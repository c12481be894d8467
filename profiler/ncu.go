package profiler

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/internal/procgroup"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
)

// CommandRunner runs a program with extra environment and returns its
// standard output; a failure's error carries the end of its standard error.
type CommandRunner interface {
	Run(ctx context.Context, env []string, name string, args ...string) ([]byte, error)
}

// ExecRunner runs programs with os/exec, each in a process group of its
// own: a cancelled context (ncu's time limit) kills the program and what it
// started, the process it profiles included, which would otherwise hold its
// output open and keep Run waiting until that process ended by itself.
type ExecRunner struct{}

// Run implements CommandRunner.
func (ExecRunner) Run(ctx context.Context, env []string, name string, args ...string) ([]byte, error) {
	cmd := procgroup.Command(ctx, 0, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tail := strings.TrimSpace(stderr.String())
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return out, fmt.Errorf("run %s: %w: %s", name, err, tail)
	}
	return out, nil
}

// Nsight Compute metrics, each in percent of the device's sustained peak
// while the kernel runs; kernels are weighted by their duration.
const (
	ncuDuration = "gpu__time_duration.sum"
	ncuSM       = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
	ncuL2       = "lts__t_sectors.avg.pct_of_peak_sustained_elapsed"
	ncuDRAM     = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
)

// NCU measures SM, L2 and DRAM utilisation with Nsight Compute: it runs a
// solo process of the model under `ncu` and averages every kernel's
// throughput metrics weighted by kernel duration. Nsight Compute profiles
// a process that owns its GPU context and does not work under MPS, so the
// solo process runs on the whole GPU: NCU covers size 100 only. Every kernel
// of the process counts, the warm-up's included.
type NCU struct {
	// Runner runs ncu; nil: ExecRunner.
	Runner CommandRunner
	// Path is the ncu program (default "ncu", found on PATH).
	Path string
	// Target gives the environment and command line of the solo process
	// ncu launches for a point (see SoloTarget).
	Target func(t UtilTarget) (env, argv []string)
	// Timeout bounds one point's ncu run (default DefaultNCUTimeout): a
	// point that takes longer is left unmeasured, with a note, and the
	// profile goes on.
	Timeout time.Duration
}

// DefaultNCUTimeout is how long one point's ncu run may take: kernel replay
// makes a profiled batch hundreds of times slower than a plain one.
const DefaultNCUTimeout = 2 * time.Minute

// Source implements UtilMeter.
func (n *NCU) Source() string { return store.SourceNCU }

// Covers implements UtilMeter: NVIDIA GPUs, whole device only.
func (n *NCU) Covers(d mps.Device, size int) bool { return d.Kind == mps.KindNVIDIA && size == 100 }

// Measure implements UtilMeter.
func (n *NCU) Measure(ctx context.Context, t UtilTarget) (UtilReading, error) {
	if n.Target == nil {
		return unknownReading(), fmt.Errorf("ncu on %s: %w: no target process", t.Device.ID, ErrUtilisation)
	}
	runner := n.Runner
	if runner == nil {
		runner = ExecRunner{}
	}
	path := n.Path
	if path == "" {
		path = "ncu"
	}
	env, argv := n.Target(t)
	timeout := n.Timeout
	if timeout <= 0 {
		timeout = DefaultNCUTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// --profile-from-start off: only the target's profiler range (its
	// measured batches, see SoloRun) is profiled.
	args := append([]string{"--csv", "--page", "raw", "--target-processes", "all", "--profile-from-start", "off",
		"--metrics", strings.Join([]string{ncuDuration, ncuSM, ncuL2, ncuDRAM}, ",")}, argv...)
	out, err := runner.Run(ctx, env, path, args...)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("%w (ncu ran longer than %s)", err, timeout)
		}
		return unknownReading(), fmt.Errorf("ncu %s b=%d on %s: %w: %w", t.Model.Name, t.Batch, t.Device.ID, ErrUtilisation, err)
	}
	r, _, err := ParseNCU(out)
	if err != nil {
		return unknownReading(), fmt.Errorf("ncu %s b=%d on %s: %w", t.Model.Name, t.Batch, t.Device.ID, err)
	}
	return r, nil
}

// ParseNCU reads `ncu --csv --page raw` output: any ==PROF== and program
// lines, then a header row of quoted column names, an optional row of
// units, and one row per profiled kernel. It returns the duration-weighted
// mean of the SM, L2 and DRAM throughput columns (NaN for a column that is
// missing or never numeric) and the number of kernels. Errors wrap
// ErrUtilisation.
func ParseNCU(out []byte) (UtilReading, int, error) {
	lines := strings.Split(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, `"ID",`) {
			start = i
			break
		}
	}
	if start < 0 {
		return unknownReading(), 0, fmt.Errorf("%w: ncu printed no CSV table%s", ErrUtilisation, profLines(lines))
	}
	var table []string
	for _, l := range lines[start:] {
		if strings.HasPrefix(l, `"`) {
			table = append(table, l)
		}
	}
	rd := csv.NewReader(strings.NewReader(strings.Join(table, "\n")))
	rd.FieldsPerRecord = -1
	rows, err := rd.ReadAll()
	if err != nil {
		return unknownReading(), 0, fmt.Errorf("%w: read ncu CSV: %v", ErrUtilisation, err)
	}
	header := rows[0]
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	dc, ok := col[ncuDuration]
	if !ok {
		return unknownReading(), 0, fmt.Errorf("%w: ncu CSV has no %s column", ErrUtilisation, ncuDuration)
	}
	metrics := []string{ncuSM, ncuL2, ncuDRAM}
	type kernel struct {
		d float64
		v [3]float64 // NaN where the cell is not a percentage
	}
	var ks []kernel
	longest := 0.0
	for _, row := range rows[1:] {
		if len(row) != len(header) || strings.TrimSpace(row[0]) == "" {
			continue // the units row, or a row cut short
		}
		d, ok := ncuNumber(row[dc])
		if !ok || d <= 0 {
			continue
		}
		k := kernel{d: d}
		for i, m := range metrics {
			k.v[i] = math.NaN()
			if c, ok := col[m]; ok {
				if v, ok := ncuNumber(row[c]); ok && v >= 0 && v <= maxNCUPercent {
					k.v[i] = v
				}
			}
		}
		ks = append(ks, k)
		longest = max(longest, d)
	}
	kernels := len(ks)
	if kernels == 0 {
		return unknownReading(), 0, fmt.Errorf("%w: ncu profiled no kernel (did the model run on the GPU?)", ErrUtilisation)
	}
	// Weights relative to the longest kernel keep the sums finite.
	var sum, weight [3]float64
	for _, k := range ks {
		w := k.d / longest
		for i, v := range k.v {
			if !math.IsNaN(v) {
				sum[i] += v * w
				weight[i] += w
			}
		}
	}
	avg := func(k int) float64 {
		if weight[k] == 0 {
			return math.NaN()
		}
		return sum[k] / weight[k]
	}
	return UtilReading{SM: avg(0), L2: avg(1), DRAM: avg(2)}, kernels, nil
}

// maxNCUPercent bounds a throughput percentage: ncu reports a share of the
// sustained peak, which a kernel can exceed a little, never tenfold.
const maxNCUPercent = 1000

// ncuNumber reads a CSV cell: thousands separators are dropped, "n/a" and
// other text is not a number.
func ncuNumber(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// profLines quotes ncu's own last messages for an error.
func profLines(lines []string) string {
	var msgs []string
	for _, l := range lines {
		if strings.HasPrefix(l, "==PROF==") || strings.HasPrefix(l, "==ERROR==") || strings.HasPrefix(l, "==WARNING==") {
			msgs = append(msgs, strings.TrimSpace(l))
		}
	}
	if len(msgs) == 0 {
		return ""
	}
	if len(msgs) > 3 {
		msgs = msgs[len(msgs)-3:]
	}
	return ": " + strings.Join(msgs, " | ")
}

// SoloTarget is the process NCU launches: `gpuletd profile --ncu-target`
// running the model alone on the whole GPU (CUDA_VISIBLE_DEVICES set to the
// device, no MPS variables), runs batches of the point's size.
func SoloTarget(binary, library string, runs int) func(t UtilTarget) (env, argv []string) {
	return func(t UtilTarget) ([]string, []string) {
		argv := []string{binary, "profile", "--ncu-target", "--batch", strconv.Itoa(t.Batch), "--runs", strconv.Itoa(runs),
			"--max-batch-size", strconv.Itoa(t.Model.MaxBatchSize)}
		if library != "" {
			argv = append(argv, "--onnxruntime-library", library)
		}
		argv = append(argv, t.Model.Path)
		return []string{"CUDA_VISIBLE_DEVICES=" + t.Device.UUID}, argv
	}
}
