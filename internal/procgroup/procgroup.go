// Package procgroup starts programs in a process group of their own, so that
// a cancelled context ends the program and every process it started: a
// program such as Nsight Compute or nvidia-cuda-mps-control starts others
// that inherit its output pipes, and killing it alone leaves them running
// and the caller waiting for those pipes to close.
package procgroup

import (
	"context"
	"os/exec"
	"syscall"
	"time"
)

// DefaultWaitDelay is how long Wait waits for a program's output pipes
// after it exited or was killed, when a process outside its group (or one
// that left it) still holds them.
const DefaultWaitDelay = 2 * time.Second

// Command is exec.CommandContext for a program in a process group of its
// own: when ctx ends, the whole group is killed (SIGKILL), and Wait returns
// at most waitDelay (0: DefaultWaitDelay) later even if a process that left
// the group still holds the program's output.
func Command(ctx context.Context, waitDelay time.Duration, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		// The group first; the process itself in case it left the group.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = waitDelay
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = DefaultWaitDelay
	}
	return cmd
}
