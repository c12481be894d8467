package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/connlimit"
)

// metricsHTTP answers a Prometheus scrape.
func (n *node) metricsHTTP() http.Handler {
	return promhttp.HandlerFor(n.metrics.reg, promhttp.HandlerOpts{ErrorLog: zap.NewStdLog(n.log.Named("metrics"))})
}

// metricsOnlyHandler is what metrics.listen serves: /metrics alone, as
// Triton's metrics port does, behind the same host check and access log as
// the API; any other path is a 404 that says where the API is.
func (n *node) metricsOnlyHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", n.metricsHTTP())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("%s: this listener (metrics.listen) serves GET /metrics alone; the API is on listen, %s", r.URL.Path, n.conf().Listen))
	})
	return connlimit.Guard(accessLog(n.accessLogger(), n.sameSite(headAsGet(mux))), isCheck)
}

// metricsServer is the listener of metrics.listen, while it serves.
type metricsServer struct {
	srv    *http.Server
	ln     net.Listener
	served chan error // the server's end, once
}

// serveMetrics opens metrics.listen under the HTTP listener's connection
// cap and serves /metrics there (over TLS when the node has a
// certificate); nil when metrics.listen is empty.
func (n *node) serveMetrics(cfg config.Config, log *zap.Logger) (*metricsServer, error) {
	if cfg.Metrics.Listen == "" {
		return nil, nil
	}
	tcp, err := net.Listen("tcp", cfg.Metrics.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s (metrics.listen): %w%s", cfg.Metrics.Listen, err, inUseHint(err, cfg.Metrics.Listen, "metrics.listen", "GPULETD_METRICS_LISTEN"))
	}
	m := &metricsServer{ln: n.conns.BesideHTTP(tcp), served: make(chan error, 1),
		srv: n.httpServer(n.metricsOnlyHandler(), cfg.Limits, log.Named("metrics_http"))}
	go func() { m.served <- serveHTTP(m.srv, m.ln) }()
	log.Info("serving metrics", zap.String("metrics_listen", m.ln.Addr().String()))
	return m, nil
}

// done is the server's end; nil (never ready) without a server.
func (m *metricsServer) done() <-chan error {
	if m == nil {
		return nil
	}
	return m.served
}

// stop lets scrapes in flight finish until ctx ends and closes the
// listener; a server that ended on its own says why.
func (m *metricsServer) stop(ctx context.Context) error {
	if m == nil {
		return nil
	}
	if err := m.srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("stop metrics listener: %w", err)
	}
	select {
	case err := <-m.served:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve metrics: %w", err)
		}
	default:
	}
	return nil
}
