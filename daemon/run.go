package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/profiler/store"
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

	if err := checkRepository(cfg.ModelRepository); err != nil {
		return err
	}
	lib, err := onnxrt.FindLibrary(cfg.ONNXRuntime.Library)
	if err != nil {
		return err
	}
	if err := onnxrt.Init(lib); err != nil {
		return err
	}
	log.Info("onnxruntime loaded", zap.String("library", lib), zap.String("version", onnxrt.Version()))

	dbPath := filepath.Join(cfg.StateDir, "gpuletd.db")
	st, err := store.Open(ctx, dbPath, store.WithLogger(log.Named("store")))
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer func() {
		if err := st.Close(); err != nil {
			log.Warn("close store", zap.Error(err))
		}
	}()
	if _, err := scanRepository(ctx, cfg.ModelRepository, st, log.Named("repository")); err != nil {
		return err
	}

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
