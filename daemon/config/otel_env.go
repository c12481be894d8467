package config

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// OpenTelemetry's own environment variables (its SDK configuration, which
// Triton's OpenTelemetry tracing reads too) stand in for the trace fields
// they match when neither the file nor a GPULETD_ variable sets them: a
// machine set up for OpenTelemetry needs no second copy of them. A value
// that cannot be read is warned about and ignored, as OpenTelemetry's
// specification asks of its SDKs.
const (
	envOTelResource   = "OTEL_RESOURCE_ATTRIBUTES"
	envOTelService    = "OTEL_SERVICE_NAME"
	envOTelQueue      = "OTEL_BSP_MAX_QUEUE_SIZE"
	envOTelDelay      = "OTEL_BSP_SCHEDULE_DELAY" // milliseconds
	envOTelBatch      = "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"
	pathOTelResource  = "trace.opentelemetry_resource"
	pathOTelQueue     = "trace.opentelemetry_bsp_max_queue_size"
	pathOTelDelay     = "trace.opentelemetry_bsp_schedule_delay"
	pathOTelBatch     = "trace.opentelemetry_bsp_max_export_batch_size"
	otelResourceUsage = "give key=value pairs separated by commas, values percent-encoded"
)

// applyOTelEnv sets the trace fields OpenTelemetry's variables in environ
// (os.Environ form) stand in for; the file and GPULETD_ variables applied
// after it win.
func (l *Loaded) applyOTelEnv(environ []string) {
	vars := map[string]string{}
	for _, kv := range environ {
		if name, value, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(name, "OTEL_") {
			vars[name] = value
		}
	}
	t := &l.Config.Trace
	from := func(path, name string) { l.Sources[path] = Source{Kind: FromEnv, Detail: name} }
	ignored := func(name, value, usage string) {
		l.Warnings = append(l.Warnings, fmt.Sprintf("environment variable %s=%q: %s; ignored", name, value, usage))
	}

	var resource, names []string
	if v, ok := vars[envOTelResource]; ok && strings.TrimSpace(v) != "" {
		attrs, err := parseOTelResource(v)
		if err != nil {
			ignored(envOTelResource, v, err.Error())
		} else if len(attrs) > 0 {
			resource, names = attrs, append(names, envOTelResource)
		}
	}
	if v := strings.TrimSpace(vars[envOTelService]); v != "" {
		// After OTEL_RESOURCE_ATTRIBUTES: its service.name is replaced.
		resource, names = append(resource, "service.name="+v), append(names, envOTelService)
	}
	if len(resource) > 0 {
		t.OpenTelemetryResource = resource
		from(pathOTelResource, strings.Join(names, ", "))
	}

	count := func(name, path string, into *int) {
		v, ok := vars[name]
		if !ok {
			return
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			ignored(name, v, "give a whole number from 1")
			return
		}
		*into = n
		from(path, name)
	}
	count(envOTelQueue, pathOTelQueue, &t.OpenTelemetryBSPMaxQueueSize)
	count(envOTelBatch, pathOTelBatch, &t.OpenTelemetryBSPMaxExportBatchSize)
	if v, ok := vars[envOTelDelay]; ok {
		ms, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || ms < 1 {
			ignored(envOTelDelay, v, "give milliseconds, a whole number from 1")
		} else {
			t.OpenTelemetryBSPScheduleDelay = Duration(time.Duration(ms) * time.Millisecond)
			from(pathOTelDelay, envOTelDelay)
		}
	}
}

// fitExportBatch lowers the export batch's default to a queue set
// smaller than it, as OpenTelemetry's SDKs do; a batch set larger than the
// queue is refused by Validate.
func (l *Loaded) fitExportBatch() {
	t := &l.Config.Trace
	if l.Sources[pathOTelBatch].Kind == FromDefault && t.OpenTelemetryBSPMaxExportBatchSize > t.OpenTelemetryBSPMaxQueueSize {
		t.OpenTelemetryBSPMaxExportBatchSize = t.OpenTelemetryBSPMaxQueueSize
	}
}

// parseOTelResource reads OTEL_RESOURCE_ATTRIBUTES: key=value pairs
// separated by commas, the values percent-encoded.
func parseOTelResource(v string) ([]string, error) {
	var out []string
	for _, pair := range strings.Split(v, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, val, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key=value: %s", strings.TrimSpace(pair), otelResourceUsage)
		}
		decoded, err := url.PathUnescape(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("%q: %s", strings.TrimSpace(pair), otelResourceUsage)
		}
		out = append(out, k+"="+decoded)
	}
	return out, nil
}
