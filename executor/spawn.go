package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/gpulet/gpuletd/internal/selfexe"
)

// SpawnOptions start one executor process.
type SpawnOptions struct {
	// Binary is the gpuletd binary; empty: the one this process runs, even
	// once an install has put another at its path (package selfexe), so
	// that daemon and executor versions never differ.
	Binary string
	// Socket is the Unix socket the executor serves on.
	Socket string
	// Env is the gpu-let's environment (mps Lease.Env), added to the
	// daemon's own environment.
	Env []string
	// Args are extra flags (--policy, --max-queue, ...).
	Args []string
	// Output receives the executor's log lines; nil: discarded.
	Output io.Writer
}

// Process is a running executor process with its client.
type Process struct {
	cmd     *exec.Cmd
	Client  *Client
	done    chan struct{}
	socket  string
	mu      sync.Mutex
	err     error
	running []uint64
}

// Spawn starts `gpuletd executor` and connects to it; it does not wait for it
// to be ready (see Client.WaitReady). The child gets SIGTERM if the spawning
// thread's process dies, so executors never outlive their daemon.
func Spawn(o SpawnOptions) (*Process, error) {
	if err := os.MkdirAll(filepath.Dir(o.Socket), 0o750); err != nil {
		return nil, fmt.Errorf("spawn executor: %w", err)
	}
	args := append([]string{"executor", "--socket", o.Socket}, o.Args...)
	cmd, err := selfexe.Command(context.Background(), o.Binary, args...)
	if err != nil {
		return nil, fmt.Errorf("spawn executor: %w", err)
	}
	cmd.Env = append(os.Environ(), o.Env...)
	if o.Output != nil {
		cmd.Stdout, cmd.Stderr = o.Output, o.Output
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("spawn executor %s: %w", cmd.Args[0], err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{}), socket: o.Socket}
	go func() {
		err := cmd.Wait()
		// An executor removes its socket when it stops; one that was
		// killed cannot. Every executor gets a socket name of its own, so
		// nothing else uses it now.
		if rerr := os.Remove(o.Socket); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
			err = fmt.Errorf("remove executor socket: %w", rerr)
		}
		// What ran when it died, and its running file, which it could
		// not remove either.
		var running []uint64
		if err != nil {
			running = readRunning(RunningFilePath(o.Socket))
		}
		_ = os.Remove(RunningFilePath(o.Socket))
		p.mu.Lock()
		p.err, p.running = err, running
		p.mu.Unlock()
		close(p.done)
	}()
	c, err := Dial(o.Socket)
	if err != nil {
		_ = p.Kill()
		return nil, err
	}
	p.Client = c
	return p, nil
}

// Pid is the executor's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitErr is the process's exit error once Done is closed (nil: exit 0).
func (p *Process) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Running is, once Done is closed and the process ended in failure, the
// ids of the requests its engine was running when it ended, as its
// running file named them (RunningFile): a crash's or a hang's suspects.
// None when it ran nothing then, or exited cleanly.
func (p *Process) Running() []uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running
}

// RunningNow is what the live executor's engine is running now, as its
// running file names it: none when it runs nothing (or has ended).
func (p *Process) RunningNow() []uint64 {
	return readRunning(RunningFilePath(p.socket))
}

// WaitReady waits until the executor answers Health, or the process exits,
// or ctx ends.
func (p *Process) WaitReady(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	if _, err := p.Client.WaitReady(ctx); err != nil {
		select {
		case <-p.done:
			return fmt.Errorf("executor exited before it was ready: %v", p.ExitErr())
		default:
		}
		return err
	}
	return nil
}

// Stop asks the executor to finish (SIGTERM) and waits up to grace before
// killing it. The client is closed.
func (p *Process) Stop(grace time.Duration) error {
	if p.Client != nil {
		defer p.Client.Close()
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop executor %d: %w", p.Pid(), err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
		return p.Kill()
	}
}

// Kill ends the executor at once.
func (p *Process) Kill() error {
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill executor %d: %w", p.Pid(), err)
	}
	<-p.done
	if p.Client != nil {
		_ = p.Client.Close()
	}
	return nil
}
