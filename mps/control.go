package mps

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// maxSocketPath is the longest Unix socket path Linux accepts (sun_path
// holds 108 bytes with the terminating NUL). MPS puts its sockets in the pipe
// directory, so the directory must leave room for their names.
const maxSocketPath = 107

// errNoSocket: the daemon's socket and pid file have not appeared yet.
var errNoSocket = errors.New("no control socket yet")

// controlSocket is the name of the control daemon's socket in its pipe directory.
const controlSocket = "control"

// pidFile is the file with the control daemon's pid that MPS writes into
// its pipe directory (NVIDIA's MPS documentation, "Tools and Interface
// Reference"). It is also the longest name MPS puts there, so it bounds how
// long the directory may be.
const pidFile = "nvidia-cuda-mps-control.pid"

// ControlConfig describes one MPS control daemon.
type ControlConfig struct {
	// DeviceID is the device the daemon serves, for logs ("gpu0").
	DeviceID string
	// Binary is the nvidia-cuda-mps-control program.
	Binary string
	// PipeDir and LogDir are CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY.
	PipeDir string
	LogDir  string
	// VisibleDevices is CUDA_VISIBLE_DEVICES for the daemon: the GPU's UUID.
	VisibleDevices string
	// Existing marks a daemon gpuletd did not start: it is only queried,
	// never started, restarted or stopped.
	Existing bool
	// Foreground runs the daemon as a child (-f) instead of daemonizing (-d).
	Foreground bool
	// QueryTimeout bounds one control command; StartTimeout a start.
	QueryTimeout time.Duration
	StartTimeout time.Duration
	// MaxLog is the size past which a log in LogDir is moved aside
	// (TrimLogs); 0: MaxMPSLog.
	MaxLog int64
}

// ControlDaemon is one nvidia-cuda-mps-control daemon: started, queried and
// stopped through the control program, as `echo <command> |
// nvidia-cuda-mps-control` does by hand. It is safe for concurrent use.
type ControlDaemon struct {
	cfg    ControlConfig
	runner Runner
	log    *zap.Logger

	mu     sync.Mutex
	proc   Process            // the -f child, nil otherwise
	cancel context.CancelFunc // ends the -f child's context
	output *os.File           // the -f child's log (ForegroundLog); nil without LogDir
}

// NewControlDaemon makes a handle for a daemon; nothing is started.
func NewControlDaemon(cfg ControlConfig, runner Runner, log *zap.Logger) *ControlDaemon {
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = 5 * time.Second
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 15 * time.Second
	}
	return &ControlDaemon{cfg: cfg, runner: runner, log: log.With(zap.String("device", cfg.DeviceID), zap.String("pipe_dir", cfg.PipeDir))}
}

// TrimLogs keeps the logs in LogDir of a daemon gpuletd started under
// MaxLog (see trimLogs); an existing daemon's are not gpuletd's to touch.
func (c *ControlDaemon) TrimLogs() error {
	if c.cfg.Existing || c.cfg.LogDir == "" {
		return nil
	}
	return trimLogs(c.cfg.LogDir, cmp.Or(c.cfg.MaxLog, MaxMPSLog))
}

// Config returns the daemon's configuration.
func (c *ControlDaemon) Config() ControlConfig { return c.cfg }

// env is the environment of every control program run.
func (c *ControlDaemon) env() []string {
	env := []string{"CUDA_MPS_PIPE_DIRECTORY=" + c.cfg.PipeDir}
	if c.cfg.LogDir != "" {
		env = append(env, "CUDA_MPS_LOG_DIRECTORY="+c.cfg.LogDir)
	}
	if c.cfg.VisibleDevices != "" {
		env = append(env, "CUDA_VISIBLE_DEVICES="+c.cfg.VisibleDevices)
	}
	return env
}

// Prepare creates the pipe and log directories (mode 0700) and checks that
// they can be written; errors wrap ErrPipeDir and name the directory.
func (c *ControlDaemon) Prepare() error {
	if n := len(filepath.Join(c.cfg.PipeDir, pidFile)); n > maxSocketPath {
		return fmt.Errorf("prepare MPS pipe directory %s: %w: %d bytes is too long for Unix sockets in it (at most %d)",
			c.cfg.PipeDir, ErrPipeDir, len(c.cfg.PipeDir), maxSocketPath-len(pidFile)-1)
	}
	for _, dir := range []struct{ what, path string }{{"pipe", c.cfg.PipeDir}, {"log", c.cfg.LogDir}} {
		if dir.path == "" {
			continue
		}
		if err := writableDir(dir.path); err != nil {
			return fmt.Errorf("prepare MPS %s directory %s: %w: %w", dir.what, dir.path, ErrPipeDir, err)
		}
	}
	return nil
}

// writableDir creates dir if needed and proves it writable with a probe file.
func writableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return errors.New("not a directory")
	}
	f, err := os.CreateTemp(dir, ".gpuletd-probe-*")
	if err != nil {
		return fmt.Errorf("not writable: %w", err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// Query sends one command to the daemon and returns its answer.
func (c *ControlDaemon) Query(ctx context.Context, command string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.QueryTimeout)
	defer cancel()
	res, err := c.runner.Run(ctx, Command{Path: c.cfg.Binary, Env: c.env(), Stdin: command + "\n"})
	if err != nil {
		return "", fmt.Errorf("query MPS control daemon (%s) with %q: %w: %w%s", c.cfg.PipeDir, command, ErrMPSDaemon, err, stderrNote(res))
	}
	return res.Stdout, nil
}

// Ping checks that the daemon answers (get_server_list).
func (c *ControlDaemon) Ping(ctx context.Context) error {
	_, err := c.Query(ctx, "get_server_list")
	return err
}

// Start brings the daemon up: an existing one must answer; otherwise the
// directories are prepared, a daemon that already answers there is adopted,
// and else one is started and waited for until it answers.
func (c *ControlDaemon) Start(ctx context.Context) error {
	if c.cfg.Existing {
		if err := c.Ping(ctx); err != nil {
			return fmt.Errorf("use existing MPS control daemon: %w", err)
		}
		return nil
	}
	if err := c.Prepare(); err != nil {
		return err
	}
	// Only a control socket left in the directory can mean a daemon runs
	// there; without one there is nothing to ask (and nothing to wait for).
	if c.mayRun() && c.Ping(ctx) == nil {
		c.log.Info("adopting an MPS control daemon that already runs")
		return nil
	}
	startCtx, cancel := context.WithTimeout(ctx, c.cfg.StartTimeout)
	defer cancel()
	var exited <-chan struct{}
	if c.cfg.Foreground {
		proc, err := c.startForeground()
		if err != nil {
			return err
		}
		exited = proc.Done()
	} else {
		res, err := c.runner.Run(startCtx, Command{Path: c.cfg.Binary, Args: []string{"-d"}, Env: c.env()})
		if err != nil {
			return fmt.Errorf("start MPS control daemon for %s: %w: %w%s", c.cfg.DeviceID, ErrMPSDaemon, err, stderrNote(res))
		}
	}
	// Wait until it answers.
	begin := time.Now()
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 500*time.Millisecond) {
		err := errNoSocket
		// Ask once the daemon's files are there (or after a second, should a
		// version name them differently).
		if c.mayRun() || time.Since(begin) > time.Second {
			err = c.Ping(startCtx)
		}
		if err == nil {
			c.log.Info("MPS control daemon started", zap.Bool("foreground", c.cfg.Foreground))
			return nil
		}
		select {
		case <-exited:
			perr := c.procErr()
			c.stopForeground()
			return fmt.Errorf("start MPS control daemon for %s: %w: exited at start: %v", c.cfg.DeviceID, ErrMPSDaemon, perr)
		case <-startCtx.Done():
			c.stopForeground()
			return fmt.Errorf("start MPS control daemon for %s: %w: no answer within %v: %w", c.cfg.DeviceID, ErrMPSDaemon, c.cfg.StartTimeout, err)
		case <-time.After(delay):
		}
	}
}

// ForegroundLog is the file in LogDir that takes what a foreground control
// daemon and its servers print (a daemonized one writes control.log and
// server.log there itself). Left on gpuletd's standard error it went to the
// journal: five lines for each query gpuletd makes every few seconds.
const ForegroundLog = "foreground.log"

// startForeground starts the -f child with a context of its own, which
// stopForeground ends; its output goes to LogDir's ForegroundLog.
func (c *ControlDaemon) startForeground() (Process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cmd := Command{Path: c.cfg.Binary, Args: []string{"-f"}, Env: c.env()}
	var output *os.File
	if c.cfg.LogDir != "" {
		var err error
		output, err = os.OpenFile(filepath.Join(c.cfg.LogDir, ForegroundLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("start MPS control daemon for %s: %w: open its log: %w", c.cfg.DeviceID, ErrMPSDaemon, err)
		}
		cmd.Output = output
	}
	ctx, cancel := context.WithCancel(context.Background())
	proc, err := c.runner.Start(ctx, cmd)
	if err != nil {
		cancel()
		if output != nil {
			_ = output.Close()
		}
		return nil, fmt.Errorf("start MPS control daemon for %s: %w: %w", c.cfg.DeviceID, ErrMPSDaemon, err)
	}
	c.proc, c.cancel, c.output = proc, cancel, output
	return proc, nil
}

// Exited is closed when a foreground daemon has exited; nil (never ready)
// for a daemonized one, whose death only a failed query shows.
func (c *ControlDaemon) Exited() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return nil
	}
	return c.proc.Done()
}

func (c *ControlDaemon) procErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return nil
	}
	return c.proc.Err()
}

// stopForeground kills a foreground child that is still there and waits for it.
func (c *ControlDaemon) stopForeground() {
	c.mu.Lock()
	proc, cancel, output := c.proc, c.cancel, c.output
	c.proc, c.cancel, c.output = nil, nil, nil
	c.mu.Unlock()
	if proc == nil {
		return
	}
	cancel()
	<-proc.Done()
	if output != nil {
		_ = output.Close()
	}
}

// Quit stops a daemon gpuletd started (`quit`) and waits until it is gone.
// An existing daemon is left alone; one that is already gone is not an error.
func (c *ControlDaemon) Quit(ctx context.Context) error {
	if c.cfg.Existing {
		return nil
	}
	defer c.stopForeground()
	if err := c.Ping(ctx); err != nil {
		c.log.Info("MPS control daemon already gone", zap.Error(err))
		return nil
	}
	if _, err := c.Query(ctx, "quit"); err != nil {
		return fmt.Errorf("stop MPS control daemon for %s: %w", c.cfg.DeviceID, err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, c.cfg.StartTimeout)
	defer cancel()
	exited := c.Exited()
	for {
		if exited != nil {
			select {
			case <-exited:
				c.log.Info("MPS control daemon stopped")
				return nil
			default:
			}
		} else if !c.mayRun() || c.Ping(waitCtx) != nil {
			c.log.Info("MPS control daemon stopped")
			return nil
		}
		select {
		case <-waitCtx.Done():
			return fmt.Errorf("stop MPS control daemon for %s: %w: still running after quit", c.cfg.DeviceID, ErrMPSDaemon)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// mayRun says whether a daemon may run in the pipe directory: its control
// socket or its pid file is there. (Both stay behind after a crash, so only
// a query tells for sure; their absence tells at once that none runs.)
func (c *ControlDaemon) mayRun() bool {
	for _, name := range []string{controlSocket, pidFile} {
		if _, err := os.Stat(filepath.Join(c.cfg.PipeDir, name)); err == nil {
			return true
		}
	}
	return false
}

// stderrNote appends a program's error output to a message.
func stderrNote(r Result) string {
	s := strings.TrimSpace(r.Stderr)
	if s == "" {
		return ""
	}
	return ": " + s
}
