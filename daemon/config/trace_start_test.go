package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The trace settings the daemon starts with are checked as the trace
// extension would take them.
func TestTraceSettingsAtStartAreChecked(t *testing.T) {
	otel := []string{"GPULETD_TRACE_MODE=opentelemetry", "GPULETD_TRACE_OPENTELEMETRY_URL=http://localhost:4318/v1/traces"}
	for _, tc := range []struct {
		name string
		env  []string
		err  string
	}{
		{"timestamps, every request", []string{"GPULETD_TRACE_LEVEL=[TIMESTAMPS]", "GPULETD_TRACE_RATE=1"}, ""},
		{"both levels", []string{"GPULETD_TRACE_LEVEL=[TIMESTAMPS, TENSORS]", "GPULETD_TRACE_FILE=t.json", "GPULETD_TRACE_LOG_FREQUENCY=50"}, ""},
		{"rate 0 to a collector", append([]string{"GPULETD_TRACE_LEVEL=[TIMESTAMPS]", "GPULETD_TRACE_RATE=0"}, otel...), ""},
		{"a level", []string{"GPULETD_TRACE_LEVEL=[DEBUG]"}, `trace.level: "DEBUG" is not allowed; give OFF, TIMESTAMPS, TENSORS`},
		{"OFF with another", []string{"GPULETD_TRACE_LEVEL=[OFF, TIMESTAMPS]"}, "OFF stands alone"},
		{"tensors to a collector", append([]string{"GPULETD_TRACE_LEVEL=[TENSORS]"}, otel...), "tensors are written to trace files only"},
		{"rate 0 to files", []string{"GPULETD_TRACE_RATE=0"}, "trace.rate: \"0\" is not allowed; give one request traced in so many, from 1"},
		{"a count", []string{"GPULETD_TRACE_COUNT=-2"}, "trace.count"},
		{"a frequency", []string{"GPULETD_TRACE_LOG_FREQUENCY=-1"}, "trace.log_frequency"},
		{"a path for a file", []string{"GPULETD_TRACE_FILE=/tmp/t.json"}, "trace.file: \"/tmp/t.json\" is not allowed; give a file name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("", tc.env)
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalid)
			require.ErrorContains(t, err, tc.err)
		})
	}
}
