package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// OpenTelemetry's variables stand in for the trace fields the file and
// GPULETD_ variables leave unset; one that cannot be read is warned about
// and ignored.
func TestOpenTelemetryVariablesStandIn(t *testing.T) {
	def := Default().Trace
	for _, tc := range []struct {
		name     string
		file     string
		env      []string
		resource []string
		queue    int
		delay    time.Duration
		batch    int
		sources  map[string]string // path: the variable or file it came from
		warning  string
	}{
		{name: "none", resource: []string{}, queue: 2048, delay: 5 * time.Second, batch: 512},
		{name: "all", env: []string{"OTEL_RESOURCE_ATTRIBUTES=deployment.environment=prod, team=ml%20infra,service.name=x",
			"OTEL_SERVICE_NAME=inference", "OTEL_BSP_MAX_QUEUE_SIZE=4096", "OTEL_BSP_SCHEDULE_DELAY=250", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE=128", "OTEL_OTHER=1"},
			resource: []string{"deployment.environment=prod", "team=ml infra", "service.name=x", "service.name=inference"},
			queue:    4096, delay: 250 * time.Millisecond, batch: 128,
			sources: map[string]string{pathOTelResource: "OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME", pathOTelQueue: "OTEL_BSP_MAX_QUEUE_SIZE",
				pathOTelDelay: "OTEL_BSP_SCHEDULE_DELAY", pathOTelBatch: "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"}},
		{name: "the file and GPULETD_ variables win",
			file:     "trace:\n  opentelemetry_resource: [a=1]\n  opentelemetry_bsp_schedule_delay: 2s\n",
			env:      []string{"OTEL_SERVICE_NAME=inference", "OTEL_BSP_SCHEDULE_DELAY=250", "OTEL_BSP_MAX_QUEUE_SIZE=4096", "GPULETD_TRACE_OPENTELEMETRY_BSP_MAX_QUEUE_SIZE=1024"},
			resource: []string{"a=1"}, queue: 1024, delay: 2 * time.Second, batch: 512,
			sources: map[string]string{pathOTelResource: "file", pathOTelDelay: "file", pathOTelQueue: "GPULETD_TRACE_OPENTELEMETRY_BSP_MAX_QUEUE_SIZE"}},
		{name: "a service name alone", env: []string{"OTEL_SERVICE_NAME=inference"}, resource: []string{"service.name=inference"}, queue: 2048, delay: 5 * time.Second, batch: 512,
			sources: map[string]string{pathOTelResource: "OTEL_SERVICE_NAME"}},
		{name: "a number that is not one", env: []string{"OTEL_BSP_MAX_QUEUE_SIZE=lots"}, resource: []string{}, queue: 2048, delay: 5 * time.Second, batch: 512,
			warning: `environment variable OTEL_BSP_MAX_QUEUE_SIZE="lots": give a whole number from 1; ignored`},
		{name: "a delay of 0", env: []string{"OTEL_BSP_SCHEDULE_DELAY=0"}, resource: []string{}, queue: 2048, delay: 5 * time.Second, batch: 512,
			warning: `environment variable OTEL_BSP_SCHEDULE_DELAY="0": give milliseconds, a whole number from 1; ignored`},
		{name: "attributes not key=value are dropped whole", env: []string{"OTEL_RESOURCE_ATTRIBUTES=a=1,team"}, resource: []string{}, queue: 2048, delay: 5 * time.Second, batch: 512,
			warning: `environment variable OTEL_RESOURCE_ATTRIBUTES="a=1,team": "team" is not key=value: give key=value pairs separated by commas, values percent-encoded; ignored`},
		{name: "a bad escape", env: []string{"OTEL_RESOURCE_ATTRIBUTES=a=%zz"}, resource: []string{}, queue: 2048, delay: 5 * time.Second, batch: 512,
			warning: `environment variable OTEL_RESOURCE_ATTRIBUTES="a=%zz": "a=%zz": give key=value pairs`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.file != "" {
				path = filepath.Join(t.TempDir(), "gpuletd.yaml")
				require.NoError(t, os.WriteFile(path, []byte(tc.file), 0o600))
			}
			l, err := Load(path, tc.env)
			require.NoError(t, err)
			tr := l.Config.Trace
			require.Equal(t, tc.resource, tr.OpenTelemetryResource)
			require.Equal(t, tc.queue, tr.OpenTelemetryBSPMaxQueueSize)
			require.Equal(t, tc.delay, tr.OpenTelemetryBSPScheduleDelay.D())
			require.Equal(t, tc.batch, tr.OpenTelemetryBSPMaxExportBatchSize)
			require.Equal(t, def.Mode, tr.Mode)
			for p, want := range tc.sources {
				src, ok := l.Sources[p]
				require.True(t, ok, p)
				if want == "file" {
					require.Equal(t, FromFile, src.Kind, p)
					continue
				}
				require.Equal(t, Source{Kind: FromEnv, Detail: want}, src, p)
			}
			if tc.warning == "" {
				require.Empty(t, l.Warnings)
				return
			}
			require.Len(t, l.Warnings, 1)
			require.Contains(t, l.Warnings[0], tc.warning)
		})
	}
}

// The batch span processor's settings are checked.
func TestBatchSpanProcessorSettingsAreChecked(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"GPULETD_TRACE_OPENTELEMETRY_BSP_MAX_QUEUE_SIZE=0"}, "trace.opentelemetry_bsp_max_queue_size"},
		{[]string{"OTEL_BSP_MAX_QUEUE_SIZE=100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE=200"}, `trace.opentelemetry_bsp_max_export_batch_size: "200" is not allowed; give a number of spans from 1 to trace.opentelemetry_bsp_max_queue_size (100)`},
		{[]string{"GPULETD_TRACE_OPENTELEMETRY_BSP_SCHEDULE_DELAY=2h"}, "trace.opentelemetry_bsp_schedule_delay"},
	} {
		_, err := Load("", tc.env)
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorContains(t, err, tc.want)
	}
	l, err := Load("", []string{"OTEL_BSP_MAX_QUEUE_SIZE=100"})
	require.NoError(t, err)
	require.Equal(t, 100, l.Config.Trace.OpenTelemetryBSPMaxExportBatchSize, "the default batch fits a smaller queue")
}
