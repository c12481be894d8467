package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The rules of the trace settings, which the trace extension (daemon's
// trace.go) and the settings the daemon starts with (validateTraceStart)
// both keep.

// TraceLevelsValid says whether levels name trace levels: TIMESTAMPS,
// TENSORS or both, or OFF alone (none: OFF).
func TraceLevelsValid(levels []string) bool {
	for _, l := range levels {
		if !slices.Contains([]string{TraceLevelOff, TraceLevelTimestamps, TraceLevelTensors}, l) {
			return false
		}
	}
	return !slices.Contains(levels, TraceLevelOff) || len(levels) == 1
}

// MinTraceRate is the least trace rate mode takes: 1, or 0 where traces
// go to a collector (then only the requests that bring a sampled trace
// context are traced).
func MinTraceRate(mode string) int64 {
	if mode == TraceModeOpenTelemetry {
		return 0
	}
	return 1
}

// TraceFileName says whether name may name a trace file: a plain name,
// the file written under state_dir, in traces/.
func TraceFileName(name string) bool {
	return name != "" && !strings.ContainsRune(name, '/') && filepath.IsLocal(name)
}

// validateTraceStart checks the trace settings the daemon starts with
// (trace.level, rate, count, log_frequency, file) as the trace extension
// would take them.
func validateTraceStart(t Trace, bad func(field, value, why string)) {
	if !TraceLevelsValid(t.Level) {
		bad("trace.level", strings.Join(t.Level, ","), "give OFF, TIMESTAMPS, TENSORS, or [TIMESTAMPS, TENSORS] (OFF stands alone)")
	}
	if slices.Contains(t.Level, TraceLevelTensors) && t.Mode == TraceModeOpenTelemetry {
		bad("trace.level", TraceLevelTensors, "tensors are written to trace files only (trace.mode triton), as in Triton")
	}
	if least := MinTraceRate(t.Mode); t.Rate < least {
		bad("trace.rate", strconv.FormatInt(t.Rate, 10), fmt.Sprintf("give one request traced in so many, from %d (0, with trace.mode opentelemetry: only those that bring a sampled traceparent)", least))
	}
	if t.Count < -1 {
		bad("trace.count", strconv.FormatInt(t.Count, 10), "give the traces to take, or -1 for no limit")
	}
	if t.LogFrequency < 0 {
		bad("trace.log_frequency", strconv.FormatInt(t.LogFrequency, 10), "give the traces per file, or 0 to write when tracing stops")
	}
	if !TraceFileName(t.File) {
		bad("trace.file", t.File, "give a file name; traces are written in state_dir, under traces/")
	}
}
