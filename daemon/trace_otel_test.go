package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
)

// collector is an OTLP/HTTP endpoint that keeps what it is sent.
type collector struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []otlpRequest
	status int // answered; 0: 200
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req otlpRequest
		ok := r.Method == http.MethodPost && r.Header.Get("Content-Type") == "application/json" && json.Unmarshal(b, &req) == nil
		c.mu.Lock()
		status := c.status
		if ok {
			c.bodies = append(c.bodies, req)
		}
		c.mu.Unlock()
		if !ok {
			status = http.StatusBadRequest
		}
		if status != 0 {
			http.Error(w, "refused", status)
		}
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// spans are the spans received, by name.
func (c *collector) spans() map[string][]otlpSpan {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]otlpSpan{}
	for _, b := range c.bodies {
		for _, rs := range b.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					out[s.Name] = append(out[s.Name], s)
				}
			}
		}
	}
	return out
}

// otelTo is the default trace configuration with traces going to the
// collector at url, with the resource attributes given.
func otelTo(url string, resource ...string) config.Trace {
	c := config.Default().Trace
	c.Mode, c.OpenTelemetryURL, c.OpenTelemetryResource = config.TraceModeOpenTelemetry, url, resource
	return c
}

func attr(kvs []otlpKeyValue, key string) string {
	for _, kv := range kvs {
		if kv.Key == key {
			if kv.Value.StringValue != nil {
				return *kv.Value.StringValue
			}
			if kv.Value.IntValue != nil {
				return *kv.Value.IntValue
			}
		}
	}
	return ""
}

// With trace.mode opentelemetry a traced request is exported as spans,
// as Triton's are: its request span, its model's with the timestamps as
// events, and its batch's compute span; a pipeline's step request hangs
// from the pipeline's model span in the same trace; a failed request's
// spans say so. What is queued when the daemon stops is sent.
func TestTracesAreExportedToACollector(t *testing.T) {
	col := newCollector(t)
	var said traceErrors
	tr := newTracer(t.TempDir(), said.add)
	tr.exportTo(newOTelExporter(otelTo(col.srv.URL+"/v1/traces", "deployment.environment=test"), said.add))
	_, err := tr.update("", map[string][]string{traceLevel: {traceTimestamps}, traceRate: {"1"}})
	require.NoError(t, err)

	t0 := time.Unix(1_700_000_000, 0)
	pipe := tr.sample("p", "p", 1, t0, nil)
	pipe.entry.RequestID = "r1"
	step := tr.child(pipe, t0.Add(time.Millisecond))
	step.entry.Model, step.entry.Version = "a", 2
	step.executorTimes(t0.Add(time.Millisecond), 600*time.Microsecond, 400*time.Microsecond,
		execReport{queue: 100 * time.Microsecond, input: 20 * time.Microsecond, compute: 200 * time.Microsecond, output: 10 * time.Microsecond})
	tr.done(step, t0.Add(2*time.Millisecond), "")
	tr.done(pipe, t0.Add(3*time.Millisecond), "")
	failed := tr.sample("a", "a", 2, t0, nil)
	tr.done(failed, t0.Add(time.Millisecond), "a: the deadline cannot be met")
	tr.close()
	require.Empty(t, said.all())

	col.mu.Lock()
	require.NotEmpty(t, col.bodies)
	res := col.bodies[0].ResourceSpans[0].Resource.Attributes
	col.mu.Unlock()
	require.Equal(t, "gpuletd", attr(res, "service.name"))
	require.Equal(t, "test", attr(res, "deployment.environment"))

	got := col.spans()
	require.Len(t, got["InferRequest"], 2)
	require.Len(t, got["p"], 1)
	require.Len(t, got["a"], 2)
	require.Len(t, got["compute"], 1)
	root, p := got["InferRequest"][0], got["p"][0]
	require.Equal(t, otlpKindServer, root.Kind)
	require.Empty(t, root.ParentSpanID)
	require.Equal(t, "r1", attr(root.Attributes, "triton.request_id"))
	require.Equal(t, root.SpanID, p.ParentSpanID, "the model span hangs from the request's")
	require.Equal(t, root.TraceID, p.TraceID)
	require.Len(t, root.TraceID, 32)
	require.Len(t, p.SpanID, 16)
	a := got["a"][0]
	require.Equal(t, p.TraceID, a.TraceID, "a step request is in its pipeline's trace")
	require.Equal(t, p.SpanID, a.ParentSpanID, "under the pipeline's model span")
	require.Equal(t, "2", attr(a.Attributes, "triton.model_version"))
	require.Equal(t, "a", attr(a.Attributes, "triton.model_name"))
	require.Equal(t, "r1", attr(p.Attributes, "triton.request_id"))
	for _, kv := range a.Attributes {
		require.NotEqual(t, "triton.request_id", kv.Key, "a request without an id has no such attribute")
	}
	var events []string
	for _, e := range a.Events {
		events = append(events, e.Name)
	}
	require.Equal(t, []string{"REQUEST_START", "QUEUE_START", "COMPUTE_START", "COMPUTE_INPUT_END", "COMPUTE_OUTPUT_START", "COMPUTE_END", "REQUEST_END"}, events)
	c := got["compute"][0]
	require.Equal(t, a.SpanID, c.ParentSpanID)
	require.Equal(t, a.Events[2].TimeUnixNano, c.StartTimeUnixNano, "the compute span runs from COMPUTE_START")
	require.Equal(t, a.Events[5].TimeUnixNano, c.EndTimeUnixNano, "to COMPUTE_END, the outputs included")
	require.Equal(t, "1700000000001200000", c.StartTimeUnixNano, "100µs along the hop (half of what the executor did not hold), then 100µs queued")
	require.Equal(t, "1700000000001430000", c.EndTimeUnixNano, "20µs of inputs, 200µs run, 10µs of outputs")

	f := got["a"][1]
	require.NotEqual(t, p.TraceID, f.TraceID, "another request, another trace")
	require.NotNil(t, f.Status)
	require.Equal(t, otlpStatusError, f.Status.Code)
	require.Equal(t, "a: the deadline cannot be met", f.Status.Message)
}

// In opentelemetry mode the settings say so; trace_mode cannot be changed
// at run time, and TENSORS are refused, as in Triton.
func TestOpenTelemetrySettings(t *testing.T) {
	col := newCollector(t)
	tr := newTracer(t.TempDir(), nil)
	tr.exportTo(newOTelExporter(otelTo(col.srv.URL), func(error) {}))
	defer tr.close()
	s := traceSettingsOf(t, tr, "")
	require.Equal(t, []string{"opentelemetry"}, s[traceMode])
	_, err := tr.update("", map[string][]string{traceMode: {"triton"}})
	require.ErrorContains(t, err, "this daemon's traces go to opentelemetry")
	_, err = tr.update("m", map[string][]string{traceLevel: {traceTensors}})
	require.ErrorContains(t, err, "tensors are written to trace files only")
	_, err = tr.update("m", map[string][]string{traceMode: {"opentelemetry"}, traceRate: {"5"}})
	require.NoError(t, err)

	files := newTestTracer(t, t.TempDir())
	_, err = files.update("", map[string][]string{traceMode: {"opentelemetry"}})
	require.ErrorContains(t, err, "this daemon's traces go to triton; trace.mode in the configuration")
}

// A collector that refuses, and spans beyond the queue, are said; the
// exporter goes on.
func TestOpenTelemetryExportFailuresAreSaid(t *testing.T) {
	col := newCollector(t)
	col.status = http.StatusServiceUnavailable
	var said traceErrors
	c := otelTo(col.srv.URL)
	c.OpenTelemetryBSPMaxQueueSize = 3
	e := newOTelExporter(c, said.add)
	span := otlpSpan{TraceID: randomID(16), SpanID: randomID(8), Name: "x", StartTimeUnixNano: "1", EndTimeUnixNano: "2"}
	e.add([]otlpSpan{span, span})
	e.add([]otlpSpan{span, span})
	e.close()
	all := said.all()
	require.Len(t, all, 2, "%q", all)
	require.Equal(t, "drop spans: 1 found the export queue full (3 spans)", all[0])
	require.True(t, strings.HasPrefix(all[1], "export 3 spans to "+col.srv.URL+": collector answered 503 Service Unavailable: refused"), all[1])
}

// A collector that does not answer holds the daemon's stop up for one
// export's timeout at most: what is left then is dropped, and said.
func TestOpenTelemetryStopIsBounded(t *testing.T) {
	release := make(chan struct{})
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer col.Close()
	defer close(release)
	var said traceErrors
	e := newOTelExporter(otelTo(col.URL), said.add)
	e.mu.Lock()
	e.timeout = 200 * time.Millisecond
	e.batch = 1000 // queued without a batch's worth: left for the stop
	e.mu.Unlock()
	e.add(make([]otlpSpan, 512+88))
	e.mu.Lock()
	e.batch = 512
	e.mu.Unlock()
	e.close()
	all := said.all()
	require.Len(t, all, 2, "%q", all)
	require.Contains(t, all[0], "export 512 spans to "+col.URL)
	require.Equal(t, "drop spans: 88 not exported before the daemon stopped", all[1])
}

// The doctor sends the configured collector an empty export and says
// whether it took it; without trace.mode opentelemetry it says nothing.
func TestDoctorChecksTheCollector(t *testing.T) {
	col := newCollector(t)
	cfg := config.Default()
	require.Nil(t, traceReport(context.Background(), cfg))

	cfg.Trace.Mode, cfg.Trace.OpenTelemetryURL = config.TraceModeOpenTelemetry, col.srv.URL+"/v1/traces"
	r := traceReport(context.Background(), cfg)
	require.True(t, r.OK, "%+v", r)
	col.mu.Lock()
	require.Len(t, col.bodies, 1, "the collector decoded the export")
	col.mu.Unlock()

	col.mu.Lock()
	col.status = http.StatusNotFound
	col.mu.Unlock()
	r = traceReport(context.Background(), cfg)
	require.False(t, r.OK)
	require.Contains(t, r.Error, "collector answered 404 Not Found")
	require.Contains(t, r.Fix, "trace.opentelemetry_url")

	col.srv.Close()
	r = traceReport(context.Background(), cfg)
	require.False(t, r.OK)
	require.Contains(t, r.Error, "connection refused")
}

// The resource has each key once: one given replaces gpuletd's default,
// and a later one an earlier.
func TestOpenTelemetryResourceKeysAreOnce(t *testing.T) {
	got := otelResource([]string{"deployment.environment=test", "service.name=inference", " team = ml ", "deployment.environment=prod"})
	var keys []string
	for _, kv := range got {
		keys = append(keys, kv.Key)
	}
	require.Equal(t, []string{"service.name", "service.version", "deployment.environment", "team"}, keys)
	require.Equal(t, "inference", attr(got, "service.name"))
	require.Equal(t, "prod", attr(got, "deployment.environment"))
	require.Equal(t, "ml", attr(got, "team"))
}

// The batch span processor's settings are the configuration's: with a
// schedule delay of 20ms a lone span is exported without waiting for the
// default 5 s or a batch's worth.
func TestOpenTelemetryScheduleDelayIsConfigured(t *testing.T) {
	col := newCollector(t)
	c := otelTo(col.srv.URL)
	c.OpenTelemetryBSPScheduleDelay = config.Duration(20 * time.Millisecond)
	e := newOTelExporter(c, func(err error) { t.Errorf("export: %v", err) })
	defer e.close()
	require.Equal(t, 512, e.batch)
	require.Equal(t, 2048, e.maxQueue)
	e.add([]otlpSpan{{TraceID: randomID(16), SpanID: randomID(8), Name: "lone", StartTimeUnixNano: "1", EndTimeUnixNano: "2"}})
	require.Eventually(t, func() bool { return len(col.spans()["lone"]) == 1 }, 3*time.Second, 10*time.Millisecond)
}
