package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// TestWindowFlags: perf_analyzer's measurement flags make a run measure in
// windows, with perf_analyzer's defaults for what is not given; without
// them a run measures one window; what gpuletd cannot measure is refused.
func TestWindowFlags(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		models int
		want   *loadgen.Windows
		err    string
	}{
		{name: "none given: one window", args: nil},
		{name: "a warm-up count alone: one window", args: []string{"--warmup-request-count", "100"}},
		{name: "-s", args: []string{"-s", "5"}, want: &loadgen.Windows{Stability: 0.05, MaxTrials: 10}},
		{name: "-r", args: []string{"-r", "20"}, want: &loadgen.Windows{Stability: 0.1, MaxTrials: 20}},
		{name: "the percentile compared", args: []string{"-s", "10", "--percentile", "95"}, want: &loadgen.Windows{Stability: 0.1, MaxTrials: 10, Percentile: 95}},
		{name: "count windows", args: []string{"--measurement-mode", "count_windows"}, want: &loadgen.Windows{Requests: 50, Stability: 0.1, MaxTrials: 10}},
		{name: "a count of requests", args: []string{"--measurement-request-count", "200"}, want: &loadgen.Windows{Requests: 200, Stability: 0.1, MaxTrials: 10}},
		{name: "time windows", args: []string{"--measurement-mode=TIME_WINDOWS"}, want: &loadgen.Windows{Stability: 0.1, MaxTrials: 10}},
		{name: "no spread", args: []string{"-s", "0"}, err: "--stability-percentage 0: give a percentage above 0"},
		{name: "too few trials", args: []string{"-r", "2"}, err: "--max-trials 2: three windows in a row must agree"},
		{name: "too many trials", args: []string{"-r", "10001"}, err: "--max-trials 10001: give at most 10000"},
		{name: "an unknown mode", args: []string{"--measurement-mode", "windows"}, err: `--measurement-mode "windows": give time_windows or count_windows`},
		{name: "a count for time windows", args: []string{"--measurement-mode", "time_windows", "--measurement-request-count", "9"}, err: "--measurement-request-count is a count window's"},
		{name: "no requests a window", args: []string{"--measurement-request-count", "0"}, err: "--measurement-request-count 0: give 1 or more"},
		{name: "a negative warm-up", args: []string{"--warmup-request-count", "-1"}, err: "--warmup-request-count -1: give 0 or more"},
		{name: "several models", args: []string{"-s", "10"}, models: 2, err: "--stability-percentage measures one model's windows"},
		{name: "a request count", args: []string{"-r", "5", "--request-count", "100"}, err: "--request-count ends the run's one window: give it or --max-trials, not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var wf windowFlags
			cmd := &cobra.Command{Use: "load"}
			cmd.Flags().Int("percentile", 0, "")
			cmd.Flags().Int64("request-count", 0, "")
			wf.register(cmd)
			require.NoError(t, cmd.Flags().Parse(tc.args))
			got, err := wf.windows(cmd, max(tc.models, 1))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestWriteWindows: the report's line on its windows names how many were
// measured, how long each lasts, whether the last three agreed and what
// they measured; a run of one window has none.
func TestWriteWindows(t *testing.T) {
	yes, no := true, false
	trials := []loadgen.Trial{
		{Duration: 500 * time.Millisecond, Throughput: 10, Latency: 9 * time.Millisecond},
		{Duration: 500 * time.Millisecond, Throughput: 1000, Latency: time.Millisecond},
		{Duration: 500 * time.Millisecond, Throughput: 1010, Latency: 1100 * time.Microsecond},
		{Duration: 500 * time.Millisecond, Throughput: 990, Latency: 1050 * time.Microsecond},
	}
	for _, tc := range []struct {
		name string
		r    *loadgen.Report
		want string
	}{
		{name: "one window", r: &loadgen.Report{}},
		{name: "agreed", r: &loadgen.Report{Windows: &loadgen.Windows{Stability: 0.1, MaxTrials: 10}, Trials: trials, Stable: &yes},
			want: "windows\t4 measured (500ms each); the last 3 agree within 10%: 1000, 1010, 990 req/s, mean 1.00ms, 1.10ms, 1.05ms\n"},
		{name: "did not", r: &loadgen.Report{Windows: &loadgen.Windows{Requests: 50, Stability: 0.01, MaxTrials: 4, Percentile: 99}, Trials: trials, Stable: &no},
			want: "windows\t4 measured (each 50 requests and 1s at least); the last 3 do not agree within 1%: 1000, 1010, 990 req/s, p99 1.00ms, 1.10ms, 1.05ms\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			writeWindows(&b, tc.r)
			require.Equal(t, tc.want, b.String())
			if tc.r.Stable != nil && !*tc.r.Stable {
				require.ErrorContains(t, unstable(tc.r, time.Second), "no 3 windows in a row agreed within 1% in 4")
			} else {
				require.NoError(t, unstable(tc.r, time.Second))
			}
		})
	}
}
