package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"
	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/connlimit"
	"github.com/gpulet/gpuletd/executor/gpuprobe"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/internal/fsperm"
	"github.com/gpulet/gpuletd/internal/memcg"
	"github.com/gpulet/gpuletd/internal/version"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// shutdownGrace bounds closing the devices, and what a start that failed
// had opened. A daemon told to stop first lets its requests in flight
// finish, for limits.shutdown_timeout.
const shutdownGrace = 10 * time.Second

// Options are what Run needs from main.
type Options struct {
	Config *config.Loaded
	Log    *zap.Logger
	// Web serves the admin page at /; nil: no page.
	Web http.Handler
	// ExecutorBinary is the gpuletd binary executors run; empty: this one.
	ExecutorBinary string
	// Ready, when set, is called once the daemon serves requests.
	Ready func(addr net.Addr)
	// Reload delivers reload requests (SIGHUP); LoadConfig reads the
	// configuration again for them.
	Reload     <-chan struct{}
	LoadConfig func() (*config.Loaded, error)
	// Level is the process's log level, which reloads may change.
	Level *zap.AtomicLevel
}

// Run serves until ctx is cancelled, then shuts down in order: stop
// accepting, let queued requests finish, stop executors, then MPS, then the
// store.
func Run(ctx context.Context, opts Options) (err error) {
	cfg := opts.Config.Config
	log := opts.Log.Named("daemon")

	if err := checkRepositories(cfg); err != nil {
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

	if w := rootOverAnotherUsersState(os.Geteuid(), cfg.StateDir, fsperm.Owner); w != "" {
		log.Warn(w)
	}
	locks, err := lockDirs(log, lockedDir{"state_dir", cfg.StateDir}, lockedDir{"runtime_dir", cfg.RuntimeDir})
	if err != nil {
		return err
	}
	defer locks.release()
	if err := checkRuntimeDir(cfg.RuntimeDir); err != nil {
		return err
	}

	st, err := openStore(ctx, filepath.Join(cfg.StateDir, store.FileName), log.Named("store"))
	if err != nil {
		return err
	}
	defer func() {
		if err := st.Close(); err != nil {
			log.Warn("close store", zap.Error(err))
		}
	}()
	// Runs left running by this daemon's earlier life, or by a `gpuletd
	// profile` killed midway; one that profile is measuring now beside
	// it stays its own.
	if _, err := st.InterruptLeftRuns(ctx); err != nil {
		log.Warn("mark interrupted profile runs", zap.Error(err))
	}

	xids := &xidSink{}
	devices, engine, err := deviceOpener{cfg: cfg, lib: lib, binary: opts.ExecutorBinary, nvml: newNVML(),
		probe: gpuprobe.Spawn, log: log, onXid: xids.heard}.open(ctx)
	if err != nil {
		return err
	}
	if err := devices.Start(ctx); err != nil {
		return fmt.Errorf("start devices: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := devices.Close(cctx); err != nil {
			log.Warn("close devices", zap.Error(err))
		}
	}()

	started := time.Now()
	n := &node{log: log, started: started, st: st, devices: devices, router: newRouter(),
		rates: newRateMeter(cfg.Scheduler.EWMAWeight, started), stepRates: newRateMeter(cfg.Scheduler.EWMAWeight, started),
		reloaded: make(chan struct{}, 1), stopped: make(chan struct{}), shm: newSharedMemory(shmDir), live: newLiveProfiles(),
		cache: newResponseCache(int64(cfg.ResponseCache.Size))}
	defer n.shm.close()
	n.traces = newTracer(TracesDir(cfg.StateDir), func(err error) { log.Warn("trace extension", zap.Error(err)) })
	if cfg.Trace.Mode == config.TraceModeOpenTelemetry {
		n.traces.exportTo(newOTelExporter(cfg.Trace,
			func(err error) { log.Warn("trace extension: opentelemetry", zap.Error(err)) }))
	}
	defer n.traces.close() // after the servers stopped: every trace taken is written
	if _, err := n.traces.update("", startTraceSettings(cfg.Trace)); err != nil {
		return fmt.Errorf("apply the trace settings of trace.level, rate, count, log_frequency and file: %w", err)
	}
	n.shm.maxRead = func() int64 { return int64(n.conf().Limits.MaxRequestBody) }
	n.shm.allowed = func() bool { return n.conf().AllowClientSHM }
	n.shm.openCUDA = openCUDAMemory(func() []string { return n.conf().ONNXRuntime.CUDALibraryDirs })
	n.cfg.Store(&cfg)
	n.level, n.onnxLib, n.engine = opts.Level, lib, engine
	if g, err := memcg.Self(); err == nil {
		n.memGroup = &g
	} else {
		log.Debug("no memory cgroup to watch", zap.Error(err))
	}
	n.events = newEvents(st, log.Named("events"))
	xids.to(n.events)
	if err := n.events.recallProblems(ctx, time.Now()); err != nil {
		log.Warn("status: warnings before this start not counted", zap.Error(err))
	}
	n.uncleanStart = n.events.recordStart(ctx, version.Version, os.Getpid(), thisHost())
	defer func() { n.events.recordStop(version.Version, started, time.Now(), context.Cause(ctx), err) }()
	if engine.Reason != "" {
		n.events.add(EventDevices, store.SeverityWarning, "serving on the CPU: "+engine.Reason,
			map[string]string{"fix": engine.Fix, "provider": engine.Provider})
	}
	if engine.Asked != "" {
		n.events.add(EventDevices, store.SeverityWarning, engine.fallbackWords(),
			map[string]string{"fix": engine.ProviderFix, "provider": engine.Provider, "asked": engine.Asked})
	}
	n.book = newProfileBook(st)
	n.catalog = newCatalog(cfg.ModelRepositories(), RepositoryOptions(&cfg), st, n.events, log.Named("repository"))
	n.catalog.requestLimit = func() int64 { return int64(n.conf().Limits.MaxRequestBody) }
	n.catalog.opts.ComputeCapabilities = mps.ComputeCapabilities(devices.Inventory().Devices)
	if n.uploads, err = newUploads(filepath.Join(cfg.StateDir, "uploads")); err != nil {
		return err
	}
	n.metrics = newMetrics(n)
	n.sup = &supervisor{devices: devices, events: n.events, log: log.Named("supervisor"),
		sockDir: filepath.Join(cfg.RuntimeDir, "executors"), binary: opts.ExecutorBinary,
		args: executorArgs(cfg, lib), env: engine.env(), onState: n.router.update, onModelsLost: n.modelsLost,
		onRestart: n.restartTried, onExit: n.executorEnded, running: map[string]*gpuletRun{}, memGroup: n.memGroup}
	n.crashes.quarantined, n.crashes.runs = n.requestQuarantined, n.runsNow

	n.catalog.keepDigests(ctx)
	startup, err := n.catalog.scan(ctx, cfg.StartupModels)
	if err != nil {
		return err
	}
	n.noteStartup(startup)
	read, _, err := printRepository(cfg.ModelRepositories())
	if err != nil {
		return err
	}
	n.repo = newRepoWatch(read)

	if n.tls, err = newServerCert(cfg.TLS); err != nil {
		return err
	}
	tcp, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w%s", cfg.Listen, err, inUseHint(err, cfg.Listen, "listen", "GPULETD_LISTEN"))
	}
	n.conns = connlimit.NewListener(tcp, connectionCap(cfg.Limits.MaxConnections, log))
	if n.tls == nil {
		n.conns.Checks(isCheck) // over TLS, Guard alone tells checks apart
	}
	n.bodies = connlimit.NewBudget(int64(cfg.Limits.MaxInflightBytes))
	n.besides = connlimit.NewBudget(int64(cfg.Limits.MaxInflightBytes))
	n.grpcAnswers = newGRPCAnswers(n)
	ln := net.Listener(n.conns)
	srv := n.httpServer(n.handler(opts.Web), cfg.Limits, log.Named("http"))
	served := make(chan error, 1)
	go func() { served <- serveHTTP(srv, ln) }()
	if n.tls != nil {
		log.Info("serving", zap.String("listen", ln.Addr().String()), zap.String("tls", n.tls.describe()))
	} else {
		log.Info("serving", zap.String("listen", ln.Addr().String()))
	}
	grpcLn, err := n.listenGRPC(cfg)
	if err != nil {
		cctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		_ = srv.Shutdown(cctx)
		return fmt.Errorf("listen on %s (grpc_listen): %w%s", cfg.GRPCListen, err, inUseHint(err, cfg.GRPCListen, "grpc_listen", "GPULETD_GRPC_LISTEN"))
	}
	grpcServed := make(chan error, 1)
	if grpcLn != nil {
		n.grpc = newGRPCFront(grpcLn, func() *grpc.Server { return n.newGRPCServer(*n.conf()) })
		log.Info("serving grpc", zap.String("grpc_listen", grpcLn.Addr().String()))
		go func() { grpcServed <- n.grpc.serve() }()
	}
	metricsSrv, err := n.serveMetrics(cfg, log)
	if err != nil {
		cctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		n.grpc.stop(cctx)
		_ = srv.Shutdown(cctx)
		return err
	}
	var metricsLn net.Listener
	if metricsSrv != nil {
		metricsLn = metricsSrv.ln
	}
	bound := boundListeners(cfg, ln, grpcLn, metricsLn, n.tls != nil)
	n.bound.Store(&bound)
	defer recordListeners(log, cfg.RuntimeDir, bound)()

	// systemd's status line, from here on: profiling may take minutes
	// before the daemon is ready.
	statusCtx, stopStatus := context.WithCancel(ctx)
	statusDone := make(chan struct{})
	go func() { defer close(statusDone); n.reportStatus(statusCtx, log) }()

	// Models without a latency profile on a measured device are profiled
	// now, while no executor holds the devices.
	n.profileMissing(ctx, opts.ExecutorBinary)
	n.measureMissingMemory(ctx, opts.ExecutorBinary)

	if n.planFirst(ctx) {
		notify(log, sd.SdNotifyReady)
		if opts.Ready != nil {
			opts.Ready(ln.Addr())
		}
	}
	loopCtx, stopLoop := context.WithCancel(ctx)
	var loops sync.WaitGroup
	loops.Add(5)
	go func() { defer loops.Done(); n.planLoop(loopCtx) }()
	go func() { defer loops.Done(); n.profileLive(loopCtx) }()
	go func() { defer loops.Done(); n.watchStore(loopCtx) }()
	go func() { defer loops.Done(); n.pruneHistory(loopCtx) }()
	go func() {
		defer loops.Done()
		watchdog(loopCtx, log, ln.Addr(), func() map[string]string { return n.conf().Auth.RestrictionHeaders() })
	}()

	var serveErr error
wait:
	for {
		select {
		case err := <-served:
			serveErr = fmt.Errorf("serve http: %w", err)
			break wait
		case err := <-grpcServed:
			serveErr = fmt.Errorf("serve grpc: %w", err)
			break wait
		case err := <-metricsSrv.done():
			serveErr = fmt.Errorf("serve metrics: %w", err)
			break wait
		case <-ctx.Done():
			break wait
		case <-opts.Reload:
			if opts.LoadConfig == nil {
				continue
			}
			notify(log, sd.SdNotifyReloading)
			n.handleReload(opts.LoadConfig)
			notify(log, sd.SdNotifyReady)
		}
	}
	log.Info("stopping")
	notify(log, sd.SdNotifyStopping)
	n.beginStop()
	stopLoop()
	loops.Wait()
	stopStatus()
	<-statusDone
	sctx, cancel := context.WithTimeout(context.Background(), n.conf().Limits.ShutdownTimeout.D())
	defer cancel()
	// Shutdown waits for in-flight requests, which the executors answer.
	grpcStopped := make(chan struct{})
	go func() { defer close(grpcStopped); n.grpc.stop(sctx) }()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("http shutdown", zap.Error(err))
	}
	if err := metricsSrv.stop(sctx); err != nil {
		log.Warn("metrics listener shutdown", zap.Error(err))
	}
	<-grpcStopped
	if err := n.sup.retireAll(sctx); err != nil {
		log.Warn("stop executors", zap.Error(err))
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) && serveErr == nil {
		serveErr = fmt.Errorf("serve http: %w", err)
	}
	log.Info("stopped")
	return serveErr
}

// executorArgs are the flags every executor gets.
func executorArgs(cfg config.Config, lib string) []string {
	return []string{
		"--policy", cfg.Scheduler.Policy,
		"--max-queue", fmt.Sprint(cfg.Limits.MaxQueuedPerModel),
		"--onnxruntime-library", lib,
		"--provider", cfg.ONNXRuntime.Provider,
		"--hang-floor", cfg.Scheduler.HangTimeout.D().String(), // 0s: the executor's own by its device
		"--log-format", "json", "--log-level", cfg.Log.Level,
	}
}

// openStore opens the daemon's store; a file that is no database (or a
// damaged one), one this user may not write and one another process holds
// locked say what the operator can do about it. The store's errors name
// what failed and the file.
func openStore(ctx context.Context, path string, log *zap.Logger) (*store.Store, error) {
	st, err := store.Open(ctx, path, store.WithLogger(log), store.WithReadOnlyFallback(),
		store.WithOwner(fmt.Sprintf("the daemon (pid %d)", os.Getpid())))
	switch {
	case errors.Is(err, store.ErrCorrupt):
		return nil, fmt.Errorf("%w; restore a backup (gpuletd restore FILE), or move it aside and start again: "+
			"the daemon then starts with an empty store and measures the models' latency profiles again", err)
	case errors.Is(err, store.ErrPermission) || errors.Is(err, store.ErrReadOnlyFS):
		return nil, fmt.Errorf("%w; or point state_dir (GPULETD_STATE_DIR) at a folder this user may write%s",
			err, writeHint(err, filepath.Dir(path)))
	case errors.Is(err, store.ErrBusy):
		return nil, fmt.Errorf("%w; end the write transaction of the process that holds the write lock, or stop it, and start again", err)
	case err != nil:
		return nil, err
	}
	return st, nil
}
