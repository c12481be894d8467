package httpbench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gpulet/gpuletd/internal/listenfile"
)

// emulatedDevices is the fallback device: one emulated V100 whose physics
// come from iGniter's measurements (shared/data/igniter).
const emulatedDevices = "[{kind: emulated, profiles: igniter-v100, count: 1}]"

// daemon is a gpuletd serve child.
type daemon struct {
	cmd  *exec.Cmd
	base string
	// grpc is its gRPC listener's address; "" without one.
	grpc  string
	log   string
	model string
	done  chan error // receives Wait's result once; stop and start put it back
}

// runtimeDir is the daemon's runtime_dir under the bench's folder, where it
// records the addresses it bound (package listenfile).
func runtimeDir(dir string) string { return filepath.Join(dir, "run") }

// environ is the daemon's environment: o.Environ without GPULETD_
// settings, plus the bench's own. Its listeners take any free port (a gRPC
// one with grpc), which startDaemon reads from the daemon's record.
func environ(o *Options, dir, repo string, grpc bool) []string {
	var env []string
	for _, kv := range o.Environ {
		if !strings.HasPrefix(kv, "GPULETD_") {
			env = append(env, kv)
		}
	}
	grpcListen := "" // off
	if grpc {
		grpcListen = "127.0.0.1:0"
	}
	return append(env,
		"GPULETD_STATE_DIR="+filepath.Join(dir, "state"),
		"GPULETD_RUNTIME_DIR="+runtimeDir(dir),
		"GPULETD_MODEL_REPOSITORY="+repo,
		"GPULETD_ONNXRUNTIME_LIBRARY="+o.ONNXRuntimeLibrary,
		"GPULETD_SCHEDULER_POLICY="+o.Policy,
		"GPULETD_LOG_FORMAT=json",
		"GPULETD_LISTEN=127.0.0.1:0",
		"GPULETD_GRPC_LISTEN="+grpcListen,
	)
}

// startOnDevice starts the daemon on the device o asks for (profiling the
// model on the CPU first) and waits until it serves the model. It returns
// the device used and, after a fallback, why.
func startOnDevice(ctx context.Context, o *Options, env []string, dir string) (d *daemon, device, note string, err error) {
	if o.Device != DeviceEmulated {
		fmt.Fprintf(o.Progress, "profiling %s on the CPU: gpuletd profile %s --device cpu\n", o.Model, o.Model)
		err := profileOnCPU(ctx, o, env, dir)
		if err == nil {
			d, err = startDaemon(ctx, o, append(env, "GPULETD_DEVICES=cpu"), dir)
			if err == nil {
				return d, DeviceCPU, "", nil
			}
		}
		if o.Device == DeviceCPU || ctx.Err() != nil {
			return nil, "", "", err
		}
		note = "cpu: " + err.Error()
		fmt.Fprintf(o.Progress, "falling back to an emulated device: %s\n", note)
	}
	d, err = startDaemon(ctx, o, append(env, "GPULETD_DEVICES="+emulatedDevices), dir)
	if err != nil {
		return nil, "", "", err
	}
	return d, "emulated igniter-v100", note, nil
}

// profileOnCPU runs the binary's profile command for the model.
func profileOnCPU(ctx context.Context, o *Options, env []string, dir string) error {
	ctx, cancel := context.WithTimeout(ctx, o.ProfileTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.Exe, "profile", o.Model, "--device", "cpu")
	cmd.Env, cmd.Dir = append(env, "GPULETD_DEVICES=cpu"), dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("gpuletd profile %s --device cpu: %v: %s", o.Model, err, lastLines(string(out), 1))
	}
	return nil
}

// lastLines is the last n non-empty lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// startDaemon starts gpuletd serve on free loopback ports, learns them
// from the record it writes in its runtime_dir (ports picked beforehand
// could be taken, or picked twice, by the time it binds them) and waits
// until it serves the model.
func startDaemon(ctx context.Context, o *Options, env []string, dir string) (*daemon, error) {
	logPath := filepath.Join(dir, "daemon.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open daemon log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(o.Exe, "serve")
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = diesWithBench()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start gpuletd serve: %w", err)
	}
	d := &daemon{cmd: cmd, log: logPath, model: o.Model, done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait() }()

	client := &http.Client{Timeout: time.Second}
	defer client.CloseIdleConnections()
	deadline := time.NewTimer(o.ReadyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-d.done:
			d.done <- err
			return nil, fmt.Errorf("gpuletd serve exited (%v): %s", err, d.logTail())
		case <-ctx.Done():
			d.stop()
			return nil, ctx.Err()
		case <-deadline.C:
			d.stop()
			return nil, fmt.Errorf("gpuletd serve did not serve %s within %s: %s", o.Model, o.ReadyTimeout, d.logTail())
		case <-tick.C:
			if d.base == "" && !d.learnAddresses(runtimeDir(dir)) {
				continue // not listening yet
			}
			resp, err := client.Get(d.base + "/v2/models/" + o.Model + "/ready")
			if err != nil {
				continue
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return d, nil
			}
		}
	}
}

// learnAddresses reads where the daemon listens from the record it keeps in
// dir, once it has written it: false before.
func (d *daemon) learnAddresses(dir string) bool {
	r, ok := listenfile.Live(dir)
	if !ok || r.PID != d.cmd.Process.Pid {
		return false
	}
	base, err := r.URL()
	if err != nil {
		return false
	}
	d.base, d.grpc = base, r.GRPCListen
	return true
}

// stop interrupts the daemon and waits for it, killing it after 30 s.
func (d *daemon) stop() { stopChild(d.cmd.Process, d.done, 30*time.Second) }

// stopChild interrupts a child process and waits for its exit on done
// (where its Wait's result arrives, and is put back for later stops),
// killing it after grace.
func stopChild(p *os.Process, done chan error, grace time.Duration) {
	_ = p.Signal(os.Interrupt)
	select {
	case err := <-done:
		done <- err
	case <-time.After(grace):
		_ = p.Kill()
		done <- <-done
	}
}

// logTail is the daemon log's last lines.
func (d *daemon) logTail() string {
	b, _ := os.ReadFile(d.log)
	return lastLines(string(b), 5)
}

// diesWithBench makes a child of the bench (the daemon, the bare server)
// stop when the bench ends however it ends: killed, it cannot stop them
// itself, and a daemon left behind would hold its port, its executors and a
// core of a machine that runs the next measurement.
func diesWithBench() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
