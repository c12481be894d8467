package profiler

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/mps"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

func TestParseNCU(t *testing.T) {
	raw := readFixture(t, "ncu/raw.csv")
	r, kernels, err := ParseNCU(raw)
	require.NoError(t, err)
	require.Equal(t, 2, kernels)
	// Weighted by duration (3,000 ns and 1,000 ns); L2 "n/a" on the
	// second kernel leaves only the first.
	require.InDelta(t, (60*3000+80*1000)/4000.0, r.SM, 1e-12)
	require.InDelta(t, 20, r.L2, 1e-12)
	require.InDelta(t, (10*3000+40*1000)/4000.0, r.DRAM, 1e-12)

	header := `"ID","Kernel Name","gpu__time_duration.sum","sm__throughput.avg.pct_of_peak_sustained_elapsed"`
	tests := []struct {
		name    string
		out     string
		wantErr string
	}{
		{"no permission", string(readFixture(t, "ncu/noperm.txt")), "ERR_NVGPUCTRPERM"},
		{"empty", "", "no CSV table"},
		{"no duration column", `"ID","Kernel Name"` + "\n" + `"0","k"`, "no gpu__time_duration.sum column"},
		{"no kernel", header + "\n" + `"","","nsecond","%"`, "profiled no kernel"},
		{"broken quoting", header + "\n" + `"0","k,"1","2"`, "read ncu CSV"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ParseNCU([]byte(tt.out))
			require.ErrorIs(t, err, ErrUtilisation)
			require.Contains(t, err.Error(), tt.wantErr)
		})
	}

	only := header + "\n" + `"0","k","2,000","55.5"`
	r, kernels, err = ParseNCU([]byte(only))
	require.NoError(t, err)
	require.Equal(t, 1, kernels)
	require.Equal(t, 55.5, r.SM)
	require.True(t, math.IsNaN(r.L2) && math.IsNaN(r.DRAM), "metrics ncu did not print are unknown, never 0")
}

// recordingRunner answers with a fixed output and records the command.
type recordingRunner struct {
	out  []byte
	err  error
	env  []string
	name string
	args []string
}

func (r *recordingRunner) Run(_ context.Context, env []string, name string, args ...string) ([]byte, error) {
	r.env, r.name, r.args = env, name, args
	return r.out, r.err
}

func TestNCUMeter(t *testing.T) {
	gpu := mps.Device{ID: "gpu0", Kind: mps.KindNVIDIA, UUID: "GPU-1234", Type: "h100-80gb-hbm3", Backend: mps.BackendMPS, Sizes: []int{50, 100}}
	run := &recordingRunner{out: readFixture(t, "ncu/raw.csv")}
	n := &NCU{Runner: run, Path: "/opt/nsight/ncu", Target: SoloTarget("/usr/bin/gpuletd", "/lib/libonnxruntime.so.1", 3)}
	require.True(t, n.Covers(gpu, 100))
	require.False(t, n.Covers(gpu, 50), "ncu does not run under MPS")
	require.False(t, n.Covers(cpuDevice(), 100))

	m := testModel("resnet18")
	r, err := n.Measure(context.Background(), UtilTarget{Model: m, Device: gpu, Size: 100, Batch: 8})
	require.NoError(t, err)
	require.InDelta(t, 65, r.SM, 1e-12)
	require.Equal(t, "/opt/nsight/ncu", run.name)
	require.Equal(t, []string{"CUDA_VISIBLE_DEVICES=GPU-1234"}, run.env)
	require.Equal(t, "--csv", run.args[0])
	i := slices.Index(run.args, "/usr/bin/gpuletd")
	require.Positive(t, i, "the solo process follows ncu's flags: %v", run.args)
	require.Equal(t, []string{"/usr/bin/gpuletd", "profile", "--ncu-target", "--batch", "8", "--runs", "3", "--max-batch-size", "32",
		"--onnxruntime-library", "/lib/libonnxruntime.so.1", m.Path}, run.args[i:])
	require.True(t, strings.Contains(strings.Join(run.args, " "), ncuDRAM))
	require.Contains(t, strings.Join(run.args[:i], " "), "--profile-from-start off", "only the target's profiler range is profiled")

	run.err = errors.New("exit status 1")
	_, err = n.Measure(context.Background(), UtilTarget{Model: m, Device: gpu, Size: 100, Batch: 8})
	require.ErrorIs(t, err, ErrUtilisation)
}

// hangingRunner blocks until its context ends, as an ncu that never
// finishes would.
type hangingRunner struct{}

func (hangingRunner) Run(ctx context.Context, _ []string, _ string, _ ...string) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestNCUMeterTimeout(t *testing.T) {
	gpu := mps.Device{ID: "gpu0", Kind: mps.KindNVIDIA, UUID: "GPU-1234", Backend: mps.BackendMPS, Sizes: []int{100}}
	n := &NCU{Runner: hangingRunner{}, Target: SoloTarget("gpuletd", "", 1), Timeout: 20 * time.Millisecond}
	_, err := n.Measure(context.Background(), UtilTarget{Model: testModel("resnet18"), Device: gpu, Size: 100, Batch: 8})
	require.ErrorIs(t, err, ErrUtilisation)
	require.ErrorContains(t, err, "ncu ran longer than 20ms")
}

// TestNCUTimeoutEndsTheProfiledProcess: the real runner's time limit ends
// ncu and the process it launched, which holds ncu's output. Before, the
// measure waited for that process to end by itself: on an H200 a point
// given --ncu-timeout 1s took about three minutes.
func TestNCUTimeoutEndsTheProfiledProcess(t *testing.T) {
	ncu := filepath.Join(t.TempDir(), "ncu")
	require.NoError(t, os.WriteFile(ncu, []byte("#!/bin/sh\nsleep 300 &\nwait\n"), 0o755))
	gpu := mps.Device{ID: "gpu0", Kind: mps.KindNVIDIA, UUID: "GPU-1234", Backend: mps.BackendMPS, Sizes: []int{100}}
	n := &NCU{Path: ncu, Target: SoloTarget("gpuletd", "", 1), Timeout: 200 * time.Millisecond}
	done := make(chan error, 1)
	go func() {
		_, err := n.Measure(context.Background(), UtilTarget{Model: testModel("resnet18"), Device: gpu, Size: 100, Batch: 8})
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrUtilisation)
		require.ErrorContains(t, err, "ncu ran longer than 200ms")
	case <-time.After(30 * time.Second):
		t.Fatal("the measure waited for the process ncu started")
	}
}

func TestMeasureUtilChainsMeters(t *testing.T) {
	gpu := mps.Device{ID: "gpu0", Kind: mps.KindNVIDIA, UUID: "GPU-1234", Backend: mps.BackendMPS, Sizes: []int{50, 100}}
	ncu := &NCU{Runner: &recordingRunner{out: readFixture(t, "ncu/raw.csv")}, Target: SoloTarget("gpuletd", "", 1)}
	broken := &NCU{Runner: &recordingRunner{err: errors.New("boom")}, Target: SoloTarget("gpuletd", "", 1)}
	dramOnly := meterFunc{src: "nvml-gpm", r: UtilReading{SM: math.NaN(), L2: math.NaN(), DRAM: 33}}
	tests := []struct {
		name      string
		meters    []UtilMeter
		size      int
		wantSM    float64
		wantSMSrc string
		wantDRAM  float64
		wantDSrc  string
		wantNotes int
	}{
		{"ncu first at 100%", []UtilMeter{ncu, dramOnly}, 100, 65, "ncu", 17.5, "ncu", 0},
		{"gpm first takes DRAM, ncu the rest", []UtilMeter{dramOnly, ncu}, 100, 65, "ncu", 33, "nvml-gpm", 0},
		{"under MPS only gpm", []UtilMeter{ncu, dramOnly}, 50, math.NaN(), "unknown", 33, "nvml-gpm", 0},
		{"a failing meter is noted and skipped", []UtilMeter{broken, dramOnly}, 100, math.NaN(), "unknown", 33, "nvml-gpm", 1},
		{"no meter", nil, 100, math.NaN(), "unknown", math.NaN(), "unknown", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, notes := measureUtil(context.Background(), tt.meters, UtilTarget{Model: testModel("m"), Device: gpu, Size: tt.size, Batch: 4}, zap.NewNop())
			require.Len(t, notes, tt.wantNotes)
			sameNum(t, tt.wantSM, float64(u.SM))
			require.Equal(t, tt.wantSMSrc, u.SMSource)
			sameNum(t, tt.wantDRAM, float64(u.DRAM))
			require.Equal(t, tt.wantDSrc, u.DRAMSource)
		})
	}
}

// meterFunc is a meter with a fixed reading that covers everything.
type meterFunc struct {
	src string
	r   UtilReading
}

func (m meterFunc) Source() string              { return m.src }
func (m meterFunc) Covers(mps.Device, int) bool { return true }
func (m meterFunc) Measure(context.Context, UtilTarget) (UtilReading, error) {
	return m.r, nil
}

func sameNum(t *testing.T, want, got float64) {
	t.Helper()
	if math.IsNaN(want) {
		require.True(t, math.IsNaN(got), "want unknown, got %v", got)
		return
	}
	require.InDelta(t, want, got, 1e-9)
}

func FuzzParseNCU(f *testing.F) {
	f.Add(readFixture(f, "ncu/raw.csv"))
	f.Add(readFixture(f, "ncu/noperm.txt"))
	f.Add([]byte(`"ID","gpu__time_duration.sum","dram__throughput.avg.pct_of_peak_sustained_elapsed"` + "\n" + `"0","1e308","1e308"` + "\n" + `"1","1e308","-5"`))
	f.Fuzz(func(t *testing.T, out []byte) {
		r, kernels, err := ParseNCU(out)
		if err != nil {
			require.ErrorIs(t, err, ErrUtilisation)
			return
		}
		require.Positive(t, kernels)
		for _, v := range []float64{r.SM, r.L2, r.DRAM} {
			require.False(t, math.IsInf(v, 0), "a reading is a number or unknown")
			if !math.IsNaN(v) {
				require.GreaterOrEqual(t, v, 0.0)
			}
		}
	})
}
