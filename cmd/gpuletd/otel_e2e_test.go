package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"google.golang.org/grpc/metadata"

	"github.com/gpulet/gpuletd/executor/tensor"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/modelzoo"
)

// TestTracesGoToAnOpenTelemetryCollector serves the demo ensemble with
// trace.mode opentelemetry and a collector (an OTLP/HTTP endpoint in the
// test): a traced pipeline request arrives there as spans in one trace —
// the request's, the pipeline's, each step's model span under the
// pipeline's and each step's compute span — and the trace settings say
// where traces go, tracing from the start as the configuration says. With
// trace_rate 0 only the requests that bring a
// sampled W3C trace context are traced, over REST (headers) and gRPC
// (metadata), each in the caller's trace under the caller's span.
func TestTracesGoToAnOpenTelemetryCollector(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	type span struct {
		TraceID      string `json:"traceId"`
		SpanID       string `json:"spanId"`
		ParentSpanID string `json:"parentSpanId"`
		Name         string `json:"name"`
	}
	var (
		mu      sync.Mutex
		spans   []span
		service string
		env     string
	)
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req struct {
			ResourceSpans []struct {
				Resource struct {
					Attributes []struct {
						Key   string `json:"key"`
						Value struct {
							StringValue string `json:"stringValue"`
						} `json:"value"`
					} `json:"attributes"`
				} `json:"resource"`
				ScopeSpans []struct {
					Spans json.RawMessage `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
		}
		if json.Unmarshal(b, &req) != nil {
			http.Error(w, "not OTLP/JSON", http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.Resource.Attributes {
				switch a.Key {
				case "service.name":
					service = a.Value.StringValue
				case "deployment.environment":
					env = a.Value.StringValue
				}
			}
			for _, ss := range rs.ScopeSpans {
				var got []span
				if json.Unmarshal(ss.Spans, &got) == nil {
					spans = append(spans, got...)
				}
			}
		}
	}))
	defer col.Close()

	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WritePipeline(repo, 5, "400ms", false))
	grpcAddr := freeAddr(t)
	addr, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_DEVICES=cpu", "GPULETD_DEFAULT_SLO=200ms",
		"GPULETD_TRACE_MODE=opentelemetry", "GPULETD_TRACE_OPENTELEMETRY_URL="+col.URL+"/v1/traces", "GPULETD_GRPC_LISTEN="+grpcAddr,
		"OTEL_RESOURCE_ATTRIBUTES=deployment.environment=e2e%20test", "OTEL_BSP_SCHEDULE_DELAY=200",
		"GPULETD_TRACE_LEVEL=[TIMESTAMPS]", "GPULETD_TRACE_RATE=1"))
	base := "http://" + addr
	url := base + "/v2/models/" + modelzoo.PipelineName
	require.Eventually(t, func() bool { return do(t, "GET", url+"/ready", nil, nil).code == 200 }, 2*time.Minute, 200*time.Millisecond, "logs:\n%s", logs)

	// Tracing on from the start (trace.level, trace.rate), as Triton's
	// --trace-config level=TIMESTAMPS --trace-config rate=1.
	r := do(t, "GET", base+"/v2/trace/setting", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Contains(t, string(r.body), `"trace_level":["TIMESTAMPS"]`)
	require.Contains(t, string(r.body), `"trace_rate":"1"`)
	require.Contains(t, string(r.body), `"trace_mode":"opentelemetry"`)
	r = do(t, "POST", base+"/v2/trace/setting", []byte(`{"trace_level": ["TENSORS"]}`), nil)
	require.Equal(t, 400, r.code, string(r.body))

	image, err := tensor.FromFloat32s("image", []int64{1, 64}, make([]float32, 64))
	require.NoError(t, err)
	r = do(t, "POST", url+"/infer", jsonRequest(t, []tensor.Tensor{image}), nil)
	require.Equal(t, 200, r.code, string(r.body))

	// The batch of spans leaves within the exporter's schedule delay (200ms
	// from OTEL_BSP_SCHEDULE_DELAY; 5 s by default).
	want := 2 + 1 + modelzoo.PipelineObjects // the request's and the pipeline's, the detector's, each classifier request's
	count := func(name string) int {
		n := 0
		for _, s := range spans {
			if s.Name == name {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return count("compute") == 1+modelzoo.PipelineObjects && len(spans) >= want
	}, 30*time.Second, 100*time.Millisecond, "spans received: %+v\nlogs:\n%s", spans, logs)
	mu.Lock()
	require.Equal(t, "gpuletd", service)
	require.Equal(t, "e2e test", env, "OTEL_RESOURCE_ATTRIBUTES is read")
	require.Equal(t, 1, count("InferRequest"))
	require.Equal(t, 1, count(modelzoo.PipelineName))
	require.Equal(t, 1, count(modelzoo.DetectorModel))
	require.Equal(t, modelzoo.PipelineObjects, count(modelzoo.ClassifierModel))
	var pipe string
	for _, s := range spans {
		if s.Name == modelzoo.PipelineName {
			pipe = s.SpanID
		}
	}
	for _, s := range spans {
		require.Equal(t, spans[0].TraceID, s.TraceID, "one trace")
		if s.Name == modelzoo.DetectorModel || s.Name == modelzoo.ClassifierModel {
			require.Equal(t, pipe, s.ParentSpanID, "%s's span hangs from the pipeline's", s.Name)
		}
	}
	spans = nil
	mu.Unlock()

	// Rate 0: a request without a context is not traced; one with a
	// sampled context is, over REST and over gRPC.
	r = do(t, "POST", base+"/v2/trace/setting", []byte(`{"trace_rate": "0"}`), nil)
	require.Equal(t, 200, r.code, string(r.body))
	body := jsonRequest(t, []tensor.Tensor{image})
	require.Equal(t, 200, do(t, "POST", url+"/infer", body, nil).code)
	const (
		restTrace, restSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
		grpcTrace, grpcSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	)
	r = do(t, "POST", url+"/infer", body, map[string]string{"traceparent": "00-" + restTrace + "-" + restSpan + "-01", "tracestate": "vendor=1"})
	require.Equal(t, 200, r.code, string(r.body))
	c, ctx := inferenceClient(t, grpcAddr, time.Minute)
	ctx = metadata.AppendToOutgoingContext(ctx, "traceparent", "00-"+grpcTrace+"-"+grpcSpan+"-01")
	_, err = c.ModelInfer(ctx, &pb.ModelInferRequest{ModelName: modelzoo.PipelineName, Inputs: []*pb.ModelInferRequest_InferInputTensor{
		{Name: "image", Datatype: "FP32", Shape: []int64{1, 64}, Contents: &pb.InferTensorContents{Fp32Contents: make([]float32, 64)}}}})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return count("compute") == 2*(1+modelzoo.PipelineObjects) && count("InferRequest") == 2
	}, 30*time.Second, 100*time.Millisecond, "spans received: %+v\nlogs:\n%s", spans, logs)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, spans, 2*(want+1+modelzoo.PipelineObjects), "the request without a context is not traced")
	callers := map[string]string{}
	for _, s := range spans {
		require.Contains(t, []string{restTrace, grpcTrace}, s.TraceID, "in the callers' traces")
		if s.Name == "InferRequest" {
			callers[s.TraceID] = s.ParentSpanID
		}
	}
	require.Equal(t, map[string]string{restTrace: restSpan, grpcTrace: grpcSpan}, callers, "each request span under its caller's span")
}
