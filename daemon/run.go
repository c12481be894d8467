package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"go.uber.org/zap"
)

// shutdownGrace bounds how long in-flight HTTP requests may take to finish
// once the daemon is told to stop.
const shutdownGrace = 10 * time.Second

// Options are what Run needs from main.
type Options struct {
	Config *config.Loaded
	Log    *zap.Logger
	// Ready, when set, is called once the daemon serves requests.
	Ready func(addr net.Addr)
}

// Run serves until ctx is cancelled, then shuts down in order and returns.
func Run(ctx context.Context, opts Options) error {
	cfg := opts.Config.Config
	log := opts.Log.Named("daemon")

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	srv := &http.Server{
		Handler:           newRouter(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          zap.NewStdLog(log.Named("http")),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("serving", zap.String("listen", ln.Addr().String()))
	if opts.Ready != nil {
		opts.Ready(ln.Addr())
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	log.Info("stopping")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("http shutdown", zap.Error(err))
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve http: %w", err)
	}
	log.Info("stopped")
	return nil
}
