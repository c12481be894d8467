package main

import (
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// TestTraceFlags: perf_analyzer's trace options give the trace settings of
// those given alone, in the trace extension's names.
func TestTraceFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want map[string][]string
	}{
		{name: "none", args: nil},
		{name: "a level", args: []string{"--trace-level", "TIMESTAMPS"}, want: map[string][]string{"trace_level": {"TIMESTAMPS"}}},
		{name: "two levels and the rest", args: []string{"--trace-level", "TIMESTAMPS", "--trace-level", "TENSORS", "--trace-rate", "5",
			"--trace-count", "100", "--log-frequency", "10", "--trace-file", "run.json"},
			want: map[string][]string{"trace_level": {"TIMESTAMPS", "TENSORS"}, "trace_rate": {"5"}, "trace_count": {"100"}, "log_frequency": {"10"}, "trace_file": {"run.json"}}},
		{name: "a default given", args: []string{"--trace-count", "-1"}, want: map[string][]string{"trace_count": {"-1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tf traceFlags
			cmd := &cobra.Command{Use: "load"}
			tf.register(cmd)
			require.NoError(t, cmd.Flags().Parse(tc.args))
			require.Equal(t, tc.want, tf.settings(cmd.Flags()))
		})
	}
}
