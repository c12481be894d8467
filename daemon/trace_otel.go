package daemon

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/internal/version"
)

// Traces exported to an OpenTelemetry collector (trace.mode
// opentelemetry, as Triton's --trace-config mode=opentelemetry): each
// traced request becomes spans — the request's (InferRequest, only for a
// request from the door), its model's (named after the model, with the
// request's timestamps as events; a pipeline's step request's model span
// is a child of the pipeline's) and its batch's compute span — sent in
// batches over OTLP/HTTP with JSON bodies. The same settings sample them
// (trace_rate, trace_count, trace_level TIMESTAMPS), and a request that
// brings a sampled trace context is traced in its caller's trace
// (trace_context.go); trace_file and log_frequency do not apply, and
// TENSORS is refused, as in Triton.

// otelExportTimeout bounds one export, as OpenTelemetry's SDKs' default
// (the batch span processor's other settings are the configuration's).
const otelExportTimeout = 10 * time.Second

// OTLP span kinds and status codes (opentelemetry-proto trace.proto).
const (
	otlpKindInternal = 1
	otlpKindServer   = 2
	otlpStatusError  = 2
)

// OTLP/JSON messages: ExportTraceServiceRequest and what it holds, the
// subset gpuletd sends. Ids are hex, 64-bit integers decimal strings, as
// the OTLP/JSON encoding has them.
type otlpRequest struct {
	ResourceSpans []otlpResourceSpans `json:"resourceSpans"`
}

type otlpResourceSpans struct {
	Resource   otlpResource     `json:"resource"`
	ScopeSpans []otlpScopeSpans `json:"scopeSpans"`
}

type otlpResource struct {
	Attributes []otlpKeyValue `json:"attributes"`
}

type otlpScopeSpans struct {
	Scope otlpScope  `json:"scope"`
	Spans []otlpSpan `json:"spans"`
}

type otlpScope struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

type otlpSpan struct {
	TraceID           string         `json:"traceId"`
	SpanID            string         `json:"spanId"`
	TraceState        string         `json:"traceState,omitempty"`
	ParentSpanID      string         `json:"parentSpanId,omitempty"`
	Name              string         `json:"name"`
	Kind              int            `json:"kind"`
	StartTimeUnixNano string         `json:"startTimeUnixNano"`
	EndTimeUnixNano   string         `json:"endTimeUnixNano"`
	Attributes        []otlpKeyValue `json:"attributes,omitempty"`
	Events            []otlpEvent    `json:"events,omitempty"`
	Status            *otlpStatus    `json:"status,omitempty"`
}

type otlpKeyValue struct {
	Key   string       `json:"key"`
	Value otlpAnyValue `json:"value"`
}

type otlpAnyValue struct {
	StringValue *string `json:"stringValue,omitempty"`
	IntValue    *string `json:"intValue,omitempty"`
}

type otlpEvent struct {
	TimeUnixNano string `json:"timeUnixNano"`
	Name         string `json:"name"`
}

type otlpStatus struct {
	Code    int    `json:"code"`
	Message string `json:"message,omitempty"`
}

func otlpString(k, v string) otlpKeyValue {
	return otlpKeyValue{Key: k, Value: otlpAnyValue{StringValue: &v}}
}

func otlpInt(k string, v int64) otlpKeyValue {
	s := strconv.FormatInt(v, 10)
	return otlpKeyValue{Key: k, Value: otlpAnyValue{IntValue: &s}}
}

func otlpTime(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) }

// otelIDs are a traced request's place in its OpenTelemetry trace.
type otelIDs struct {
	trace  string // 16 bytes, hex
	parent string // the span its model span hangs from: its request span, or its pipeline's model span
	model  string // its model span
	caller string // the span its request span hangs from: the caller's, when it brought its trace context
	state  string // the tracestate it brought
}

// randomID is n random bytes in hex.
func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// spans are a traced request's spans once answered at end (errMsg when it
// failed): its request span when it came from the door (no parent), its
// model span and its batch's compute span.
func (tr *reqTrace) spans(end time.Time, errMsg string) []otlpSpan {
	var status *otlpStatus
	if errMsg != "" {
		status = &otlpStatus{Code: otlpStatusError, Message: errMsg}
	}
	var requestID []otlpKeyValue // the attribute names are Triton's
	if tr.entry.RequestID != "" {
		requestID = []otlpKeyValue{otlpString("triton.request_id", tr.entry.RequestID)}
	}
	var out []otlpSpan
	if tr.entry.ParentID == 0 {
		out = append(out, otlpSpan{TraceID: tr.otel.trace, TraceState: tr.otel.state, SpanID: tr.otel.parent, ParentSpanID: tr.otel.caller, Name: "InferRequest", Kind: otlpKindServer,
			StartTimeUnixNano: otlpTime(tr.start), EndTimeUnixNano: otlpTime(end), Status: status, Attributes: requestID})
	}
	events := []otlpEvent{{otlpTime(tr.start), "REQUEST_START"}}
	x := tr.exec
	if x.set {
		for _, ts := range x.computeTimestamps() {
			events = append(events, otlpEvent{strconv.FormatInt(ts.NS, 10), ts.Name})
		}
	}
	events = append(events, otlpEvent{otlpTime(end), "REQUEST_END"})
	out = append(out, otlpSpan{TraceID: tr.otel.trace, TraceState: tr.otel.state, SpanID: tr.otel.model, ParentSpanID: tr.otel.parent, Name: tr.entry.Model,
		Kind: otlpKindInternal, StartTimeUnixNano: otlpTime(tr.start), EndTimeUnixNano: otlpTime(end), Status: status, Events: events,
		Attributes: append([]otlpKeyValue{otlpString("triton.model_name", tr.entry.Model), otlpInt("triton.model_version", int64(tr.entry.Version))},
			requestID...)})
	if x.set {
		out = append(out, otlpSpan{TraceID: tr.otel.trace, TraceState: tr.otel.state, SpanID: randomID(8), ParentSpanID: tr.otel.model, Name: "compute",
			Kind: otlpKindInternal, StartTimeUnixNano: otlpTime(x.ran), EndTimeUnixNano: otlpTime(x.end())})
	}
	return out
}

// otelExporter sends spans to a collector in batches (OpenTelemetry's
// batch span processor): when a batch's worth is queued or the oldest has
// waited the schedule delay, and what is left when it closes (for at most
// one export's timeout). Spans beyond the queue's room are dropped and said
// once per export.
type otelExporter struct {
	url      string
	resource []otlpKeyValue
	client   *http.Client
	fail     func(error)
	batch    int
	delay    time.Duration
	maxQueue int
	timeout  time.Duration // one export's, and the flush's at close

	mu      sync.Mutex
	queue   []otlpSpan
	dropped int
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// newOTelExporter starts an exporter as the trace configuration says (the
// collector's URL, the resource's attributes, the batch span processor);
// failed exports go to fail. close stops it.
func newOTelExporter(c config.Trace, fail func(error)) *otelExporter {
	e := newOTelPoster(c)
	e.fail = fail
	go e.run()
	return e
}

// newOTelPoster is an exporter that only posts (post), as the doctor does:
// newOTelExporter starts it.
func newOTelPoster(c config.Trace) *otelExporter {
	return &otelExporter{url: c.OpenTelemetryURL, resource: otelResource(c.OpenTelemetryResource), client: &http.Client{},
		batch: c.OpenTelemetryBSPMaxExportBatchSize, delay: c.OpenTelemetryBSPScheduleDelay.D(), maxQueue: c.OpenTelemetryBSPMaxQueueSize,
		timeout: otelExportTimeout, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// otelResource is the spans' resource: service.name=gpuletd and
// service.version, then the key=value attributes given, a key given again
// taking the place of the earlier one (OTLP wants each key once).
func otelResource(given []string) []otlpKeyValue {
	attrs := []otlpKeyValue{otlpString("service.name", "gpuletd"), otlpString("service.version", version.Version)}
	at := map[string]int{"service.name": 0, "service.version": 1}
	for _, kv := range given {
		k, v, _ := strings.Cut(kv, "=")
		a := otlpString(strings.TrimSpace(k), strings.TrimSpace(v))
		if i, ok := at[a.Key]; ok {
			attrs[i] = a
			continue
		}
		at[a.Key] = len(attrs)
		attrs = append(attrs, a)
	}
	return attrs
}

// add queues spans for export.
func (e *otelExporter) add(spans []otlpSpan) {
	e.mu.Lock()
	room := max(e.maxQueue-len(e.queue), 0)
	if len(spans) > room {
		e.dropped += len(spans) - room
		spans = spans[:room]
	}
	e.queue = append(e.queue, spans...)
	full := len(e.queue) >= e.batch
	e.mu.Unlock()
	if full {
		select {
		case e.kick <- struct{}{}:
		default:
		}
	}
}

// run exports until close, then what is left.
func (e *otelExporter) run() {
	defer close(e.done)
	timer := time.NewTimer(e.delay)
	defer timer.Stop()
	for {
		select {
		case <-e.stop:
			// What is queued goes, within one export's time in all, so
			// that a collector that does not answer cannot hold the
			// daemon's stop up for a timeout per batch.
			deadline := time.Now().Add(e.timeout)
			for time.Now().Before(deadline) && e.export() {
			}
			e.mu.Lock()
			left := len(e.queue)
			e.queue = nil
			e.mu.Unlock()
			if left > 0 {
				e.fail(fmt.Errorf("drop spans: %d not exported before the daemon stopped", left))
			}
			return
		case <-e.kick:
		case <-timer.C:
			timer.Reset(e.delay)
		}
		for e.export() {
		}
	}
}

// export sends one batch, if any is queued (true when it sent one).
func (e *otelExporter) export() bool {
	e.mu.Lock()
	n := min(len(e.queue), e.batch)
	spans := e.queue[:n:n]
	e.queue = e.queue[n:]
	dropped := e.dropped
	e.dropped = 0
	e.mu.Unlock()
	if dropped > 0 {
		e.fail(fmt.Errorf("drop spans: %d found the export queue full (%d spans)", dropped, e.maxQueue))
	}
	if n == 0 {
		return false
	}
	if err := e.post(context.Background(), spans); err != nil {
		e.fail(fmt.Errorf("export %d spans to %s: %w", n, e.url, err))
	}
	return true
}

// post sends spans as one OTLP/HTTP request.
func (e *otelExporter) post(ctx context.Context, spans []otlpSpan) error {
	body, err := json.Marshal(otlpRequest{ResourceSpans: []otlpResourceSpans{{
		Resource:   otlpResource{Attributes: e.resource},
		ScopeSpans: []otlpScopeSpans{{Scope: otlpScope{Name: "gpuletd", Version: version.Version}, Spans: spans}},
	}}})
	if err != nil {
		return fmt.Errorf("encode spans: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build export request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("post spans: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("collector answered %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

// close exports what is queued and stops.
func (e *otelExporter) close() {
	close(e.stop)
	<-e.done
}
