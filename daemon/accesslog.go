package daemon

import (
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/gpulet/gpuletd/kserve"
)

// At log level debug (log.level, or the logging extension's
// log_verbose_level above 0, as Triton's --log-verbose) every HTTP request
// and gRPC call is logged when it ends: who, what, the answer and how long
// it took. Otherwise nothing is done per request beyond one level check.

// accessLogger is the access log's logger (none for a node built without
// a log, as some tests build one).
func (n *node) accessLogger() *zap.Logger {
	if n.log == nil {
		return zap.NewNop()
	}
	return n.log.Named("access")
}

// accessLog logs each HTTP request h answers, at debug level.
func accessLog(log *zap.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !log.Core().Enabled(zapcore.DebugLevel) {
			h.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rec := &recordingWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		fields := []zap.Field{zap.String("method", r.Method), zap.String("path", r.URL.Path),
			zap.Int("status", rec.status), zap.Int64("bytes", rec.bytes), zap.Duration("took", time.Since(start)),
			zap.String("remote", r.RemoteAddr), zap.String("proto", r.Proto)}
		if why := rec.Header().Get(kserve.HeaderFailureReason); why != "" {
			fields = append(fields, zap.String("reason", why))
		}
		if ua := r.UserAgent(); ua != "" {
			fields = append(fields, zap.String("user_agent", ua))
		}
		log.Debug("http request", fields...)
	})
}

// recordingWriter notes an answer's status and size.
type recordingWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (w *recordingWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.wrote = true
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush passes a flush on (the event stream flushes each event).
func (w *recordingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// grpcAccessLog logs each unary gRPC call, at debug level.
func grpcAccessLog(log *zap.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if !log.Core().Enabled(zapcore.DebugLevel) {
			return next(ctx, req)
		}
		start := time.Now()
		res, err := next(ctx, req)
		fields := grpcCallFields(ctx, info.FullMethod, err, start)
		if err != nil {
			fields = append(fields, zap.String("error", grpcstatus.Convert(err).Message()))
		}
		log.Debug("grpc call", fields...)
		return res, err
	}
}

// grpcStreamAccessLog logs each gRPC stream when it ends, at debug level.
func grpcStreamAccessLog(log *zap.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
		if !log.Core().Enabled(zapcore.DebugLevel) {
			return next(srv, ss)
		}
		start := time.Now()
		err := next(srv, ss)
		log.Debug("grpc stream", grpcCallFields(ss.Context(), info.FullMethod, err, start)...)
		return err
	}
}

// grpcCallFields are what the access log says of every gRPC call or stream
// that started at start and ended with err.
func grpcCallFields(ctx context.Context, method string, err error, start time.Time) []zap.Field {
	fields := []zap.Field{zap.String("method", method), zap.String("code", grpcstatus.Code(err).String()),
		zap.Duration("took", time.Since(start))}
	if p, ok := peer.FromContext(ctx); ok {
		fields = append(fields, zap.String("remote", p.Addr.String()))
	}
	return fields
}
