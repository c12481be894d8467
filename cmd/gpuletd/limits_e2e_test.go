package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// rawRequest opens a connection and sends an inference request's headers
// and the first part of a body that says it is longer.
func rawRequest(t *testing.T, addr, model string, length int, first string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	_, err = fmt.Fprintf(c, "POST /v2/models/%s/infer HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", model, addr, length, first)
	require.NoError(t, err)
	return c
}

// answer reads one HTTP answer from c within limit.
func answer(t *testing.T, c net.Conn, limit time.Duration) (*http.Response, string) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(limit)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp, string(b)
}

// TestClientsCannotHoldTheDaemon: a body that never completes is answered
// 408 within limits.body_timeout, an idle keep-alive connection is closed
// after limits.idle_timeout, connections over limits.max_connections are
// answered 503 at once (health checks, REST and gRPC, are answered), and a
// body that does not fit in limits.max_inflight_bytes waits up to its SLO,
// then is answered 503; the daemon keeps serving throughout and the metrics
// say what happened.
func TestClientsCannotHoldTheDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	grpcAddr := freeAddr(t)
	base, logs, _ := emulatedDaemon(t, []string{"mlp"},
		"GPULETD_TEST_PROFILES=mlp:resnet50", "GPULETD_GRPC_LISTEN="+grpcAddr,
		"GPULETD_LIMITS_BODY_TIMEOUT=2s", "GPULETD_LIMITS_IDLE_TIMEOUT=2s",
		"GPULETD_LIMITS_MAX_CONNECTIONS=12",
		"GPULETD_LIMITS_MAX_REQUEST_BODY=1MiB", "GPULETD_LIMITS_MAX_INFLIGHT_BYTES=1536KiB")
	addr := strings.TrimPrefix(base, "http://")

	t.Run("a body shorter than it says is answered 408", func(t *testing.T) {
		start := time.Now()
		c := rawRequest(t, addr, "mlp", 1000, `{"inputs":`)
		defer c.Close()
		resp, body := answer(t, c, 10*time.Second)
		require.Equal(t, http.StatusRequestTimeout, resp.StatusCode, body)
		require.Contains(t, body, "limits.body_timeout")
		require.Less(t, time.Since(start), 8*time.Second)
	})

	t.Run("an idle keep-alive connection is closed", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		_, err = fmt.Fprintf(c, "GET /v2/health/live HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		r := bufio.NewReader(c)
		resp, err := http.ReadResponse(r, nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		idle := time.Now()
		_, err = r.ReadByte()
		require.ErrorIs(t, err, io.EOF, "the daemon closes it")
		require.Less(t, time.Since(idle), 8*time.Second)
	})

	t.Run("connections over the cap are answered 503", func(t *testing.T) {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				_ = c.Close()
			}
		}()
		for range 16 {
			held = append(held, rawRequest(t, addr, "mlp", 1000, ""))
		}
		require.Eventually(t, func() bool {
			return metricAt(t, base, "gpuletd_http_connections") == metricAt(t, base, "gpuletd_http_connections_max")
		}, 10*time.Second, 20*time.Millisecond, "the held connections fill the cap")
		// The cap is full (for body_timeout): health checks and scrapes
		// are still answered, from the reserve.
		fresh := &http.Client{Transport: &http.Transport{}} // no pooled connection within the cap
		defer fresh.CloseIdleConnections()
		for _, path := range []string{"/v2/health/live", "/metrics"} {
			resp, err := fresh.Get(base + path)
			require.NoError(t, err, path)
			_, _ = io.Copy(io.Discard, resp.Body)
			require.NoError(t, resp.Body.Close())
			require.Equal(t, http.StatusOK, resp.StatusCode, path)
			require.True(t, resp.Close, "%s: over the cap, on a connection of its own", path)
		}
		// A gRPC probe too (Kubernetes' gRPC probes dial for each);
		// anything else on its connection is refused.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		gc, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		defer gc.Close()
		res, err := healthpb.NewHealthClient(gc).Check(ctx, &healthpb.HealthCheckRequest{})
		require.NoError(t, err, "a gRPC health check over the cap")
		require.Equal(t, healthpb.HealthCheckResponse_SERVING, res.Status)
		_, err = pb.NewGRPCInferenceServiceClient(gc).ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "mlp"})
		requireCode(t, err, codes.Unavailable, "limits.max_connections")
		var refused []*http.Response
		for _, c := range held {
			_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				refused = append(refused, resp)
				_ = resp.Body.Close()
			}
		}
		require.GreaterOrEqual(t, len(refused), 4, "connections over the cap get an answer at once")
		for _, resp := range refused {
			require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
			require.Equal(t, "1", resp.Header.Get("Retry-After"))
		}
		for _, c := range held {
			_ = c.Close()
		}
		held = nil
		require.Eventually(t, func() bool {
			resp, err := http.Get(base + "/v2/health/ready")
			if err != nil {
				return false
			}
			_ = resp.Body.Close()
			return resp.StatusCode == 200
		}, 10*time.Second, 100*time.Millisecond, "places come back as connections close")
	})

	t.Run("a body that does not fit in the bytes budget gets 503", func(t *testing.T) {
		// A body holds what it has sent: nearly all of its MiB here.
		first := rawRequest(t, addr, "mlp", 1<<20, strings.Repeat(" ", 1<<20-16))
		defer first.Close()
		require.Eventually(t, func() bool {
			return metricAt(t, base, "gpuletd_http_inflight_request_bytes") >= 1<<20
		}, 5*time.Second, 50*time.Millisecond, "the stalled body holds what it sent in the budget")
		require.GreaterOrEqual(t, metricAt(t, base, `gpuletd_model_inflight_request_bytes{model="mlp"}`), float64(1<<20), "as mlp's")
		// The daemon may refuse it and close before the whole body is
		// written (the write then fails: that is the refusal), so the answer
		// is read while it is written.
		second, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer second.Close()
		written := make(chan struct{})
		go func() {
			defer close(written)
			_, _ = fmt.Fprintf(second, "POST /v2/models/mlp/infer HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				addr, 1<<20, strings.Repeat(" ", 1<<20))
		}()
		resp, body := answer(t, second, 10*time.Second)
		_ = second.Close()
		<-written
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, body)
		require.Contains(t, body, "limits.max_inflight_bytes")
		require.Equal(t, "1", resp.Header.Get("Retry-After"))
		_, _ = answer(t, first, 10*time.Second)
		require.Eventually(t, func() bool {
			return metricAt(t, base, "gpuletd_http_inflight_request_bytes") == 0
		}, 5*time.Second, 50*time.Millisecond, "the budget is given back")
	})

	r := do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(1), nil)
	require.Equal(t, 200, r.code, "the daemon serves on; logs:\n%s", logs)
	m := do(t, "GET", base+"/metrics", nil, nil)
	for _, want := range []string{
		`gpuletd_request_failures_total{model="mlp",reason="body_timeout"}`,
		`gpuletd_request_failures_total{model="mlp",reason="memory_budget"}`,
		"gpuletd_http_connections_refused_total",
		"gpuletd_http_inflight_bytes_refused_total 1",
		"gpuletd_http_connections_max 12",
	} {
		require.Contains(t, string(m.body), want)
	}
}

// metricAt is the value of a metric at /metrics, named with its labels as
// the exposition writes them (-1 if absent).
func metricAt(t *testing.T, base, name string) float64 {
	t.Helper()
	m := do(t, "GET", base+"/metrics", nil, nil)
	for _, line := range strings.Split(string(m.body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var f float64
			_, err := fmt.Sscan(v, &f)
			require.NoError(t, err)
			return f
		}
	}
	return -1
}

// TestAModelNoRequestFitsIsNotReady: a model placed whose one input alone
// is above limits.max_request_body is not ready and says why, the other
// models serve, and loading it answers at once why it is not ready (409)
// rather than waiting for a readiness no wait brings.
func TestAModelNoRequestFitsIsNotReady(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	base, logs, _ := startEmulatedDaemon(t, []string{"mlp", "mlp16"}, "GPULETD_TEST_PROFILES=mlp:alexnet,mlp16:alexnet",
		"GPULETD_LIMITS_MAX_REQUEST_BODY=2KiB")
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/models/mlp16/ready", nil, nil).code == http.StatusOK },
		60*time.Second, 100*time.Millisecond, "mlp16's requests fit and it serves; logs:\n%s", logs)
	var ready struct {
		Ready  bool   `json:"ready"`
		Reason string `json:"reason"`
	}
	r := do(t, "GET", base+"/v2/models/mlp/ready", nil, nil)
	require.Equal(t, http.StatusServiceUnavailable, r.code)
	require.NoError(t, json.Unmarshal(r.body, &ready))
	require.Contains(t, ready.Reason, `every request is refused: input "input" alone takes`)

	code, _, stderr := runCLI(t, "models", "load", "mlp", "--url", base, "--wait", "30s")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "model mlp loaded and placed but not ready: every request is refused")
}
