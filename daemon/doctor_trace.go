package daemon

import (
	"context"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
)

// TraceReport is the OpenTelemetry collector traces would be exported to
// (trace.mode opentelemetry): whether it takes an export.
type TraceReport struct {
	URL string `json:"url"`
	OK  bool   `json:"ok"`
	// Error says what the collector answered, or why it could not be
	// reached: serve starts anyway, and logs each failed export.
	Error string `json:"error,omitempty"`
	Fix   string `json:"fix,omitempty"`
}

// doctorTraceTimeout bounds the doctor's export to the collector.
const doctorTraceTimeout = 5 * time.Second

// traceReport sends the configured collector an export with no spans, as
// serve's exporter sends them; nil unless traces go to a collector.
func traceReport(ctx context.Context, cfg config.Config) *TraceReport {
	if cfg.Trace.Mode != config.TraceModeOpenTelemetry {
		return nil
	}
	r := &TraceReport{URL: cfg.Trace.OpenTelemetryURL}
	e := newOTelPoster(cfg.Trace)
	e.timeout = doctorTraceTimeout
	if err := e.post(ctx, []otlpSpan{}); err != nil {
		r.Error = err.Error()
		r.Fix = "start the collector, or point trace.opentelemetry_url at its OTLP/HTTP traces endpoint (such as http://localhost:4318/v1/traces)"
		return r
	}
	r.OK = true
	return r
}
