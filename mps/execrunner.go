package mps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/internal/procgroup"
)

// ExecRunner is the Runner that runs real programs with os/exec. Each
// program gets its own process group, and a cancelled context kills the
// whole group, so a hung program cannot outlive its caller.
type ExecRunner struct {
	// WaitDelay bounds the wait for output pipes after a program exits (a
	// daemonizing program's child may hold them); 0 means
	// procgroup.DefaultWaitDelay.
	WaitDelay time.Duration
}

func (r ExecRunner) command(ctx context.Context, c Command) *exec.Cmd {
	cmd := procgroup.Command(ctx, r.WaitDelay, c.Path, c.Args...)
	cmd.Env = append(os.Environ(), c.Env...)
	if c.Stdin != "" {
		cmd.Stdin = strings.NewReader(c.Stdin)
	}
	return cmd
}

// Run runs c to its end and returns its output.
func (r ExecRunner) Run(ctx context.Context, c Command) (Result, error) {
	cmd := r.command(ctx, c)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if errors.Is(err, exec.ErrWaitDelay) && res.ExitCode == 0 {
		err = nil // exited fine; a daemon it forked kept the pipes
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		return res, fmt.Errorf("run %s %s: %w", c.Path, strings.Join(c.Args, " "), err)
	}
	return res, nil
}

// Start starts c; its output goes to c.Output, else this process's stderr.
func (r ExecRunner) Start(ctx context.Context, c Command) (Process, error) {
	cmd := r.command(ctx, c)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if c.Output != nil {
		cmd.Stdout, cmd.Stderr = c.Output, c.Output
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s %s: %w", c.Path, strings.Join(c.Args, " "), err)
	}
	p := &execProcess{cmd: cmd, done: make(chan struct{})}
	// Owned by the process: it ends when the program exits, which ctx forces.
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

type execProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func (p *execProcess) PID() int                 { return p.cmd.Process.Pid }
func (p *execProcess) Done() <-chan struct{}    { return p.done }
func (p *execProcess) Signal(s os.Signal) error { return p.cmd.Process.Signal(s) }
func (p *execProcess) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}
