package daemon

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/gpulet/gpuletd/kserve"
)

func TestAccessLog(t *testing.T) {
	level := zap.NewAtomicLevelAt(zapcore.InfoLevel)
	core, logs := observer.New(level)
	log := zap.New(core)
	var got http.ResponseWriter
	h := accessLog(log, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		got = w
		w.Header().Set(kserve.HeaderFailureReason, "deadline")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":"late"}`))
		w.(http.Flusher).Flush()
	}))
	serve := func() {
		req := httptest.NewRequest("POST", "/v2/models/lenet5/infer", nil)
		req.RemoteAddr = "10.0.0.7:51234"
		req.Header.Set("User-Agent", "tritonclient")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	}

	serve()
	require.Zero(t, logs.Len(), "nothing at info level")
	_, wrapped := got.(*recordingWriter)
	require.False(t, wrapped, "nor any wrapping")

	level.SetLevel(zapcore.DebugLevel) // as log_verbose_level 1 does
	serve()
	require.Equal(t, 1, logs.Len())
	e := logs.All()[0]
	require.Equal(t, "http request", e.Message)
	require.Equal(t, map[string]any{"method": "POST", "path": "/v2/models/lenet5/infer", "status": int64(503), "bytes": int64(16),
		"took": e.ContextMap()["took"], "remote": "10.0.0.7:51234", "proto": "HTTP/1.1", "reason": "deadline", "user_agent": "tritonclient"}, e.ContextMap())
}

func TestGRPCAccessLog(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	unary := grpcAccessLog(zap.New(core))
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 8), Port: 4000}})
	info := &grpc.UnaryServerInfo{FullMethod: "/inference.GRPCInferenceService/ModelInfer"}
	_, err := unary(ctx, nil, info, func(context.Context, any) (any, error) {
		return nil, grpcstatus.Error(codes.InvalidArgument, "wrong shape")
	})
	require.Error(t, err)
	_, err = unary(ctx, nil, info, func(context.Context, any) (any, error) { return "ok", nil })
	require.NoError(t, err)
	require.Equal(t, 2, logs.Len())
	first, second := logs.All()[0].ContextMap(), logs.All()[1].ContextMap()
	require.Equal(t, "InvalidArgument", first["code"])
	require.Equal(t, "wrong shape", first["error"])
	require.Equal(t, "10.0.0.8:4000", first["remote"])
	require.Equal(t, "/inference.GRPCInferenceService/ModelInfer", first["method"])
	require.Equal(t, "OK", second["code"])
	require.NotContains(t, second, "error")
}
