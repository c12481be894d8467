package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// validateTraceStart checks the trace settings the daemon starts with
// (trace.level, rate, count, log_frequency, file) as the trace extension
// would take them.
func validateTraceStart(t Trace, bad func(field, value, why string)) {
	levels := []string{TraceLevelOff, TraceLevelTimestamps, TraceLevelTensors}
	for _, l := range t.Level {
		if !slices.Contains(levels, l) {
			bad("trace.level", l, "give OFF, TIMESTAMPS, TENSORS, or [TIMESTAMPS, TENSORS]")
		}
	}
	if slices.Contains(t.Level, TraceLevelOff) && len(t.Level) > 1 {
		bad("trace.level", strings.Join(t.Level, ","), "OFF stands alone")
	}
	if slices.Contains(t.Level, TraceLevelTensors) && t.Mode == TraceModeOpenTelemetry {
		bad("trace.level", TraceLevelTensors, "tensors are written to trace files only (trace.mode triton), as in Triton")
	}
	least := int64(1)
	if t.Mode == TraceModeOpenTelemetry {
		least = 0 // only the requests that bring a sampled trace context
	}
	if t.Rate < least {
		bad("trace.rate", strconv.FormatInt(t.Rate, 10), fmt.Sprintf("give one request traced in so many, from %d (0, with trace.mode opentelemetry: only those that bring a sampled traceparent)", least))
	}
	if t.Count < -1 {
		bad("trace.count", strconv.FormatInt(t.Count, 10), "give the traces to take, or -1 for no limit")
	}
	if t.LogFrequency < 0 {
		bad("trace.log_frequency", strconv.FormatInt(t.LogFrequency, 10), "give the traces per file, or 0 to write when tracing stops")
	}
	if t.File == "" || strings.ContainsRune(t.File, '/') || !filepath.IsLocal(t.File) {
		bad("trace.file", t.File, "give a file name; traces are written in state_dir, under traces/")
	}
}
