package procgroup

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestCommandEndsWhatTheProgramStarted: a program whose child holds its
// output and outlives it (Nsight Compute and the process it profiles) is
// ended with that child when the context ends; Run does not wait for the
// child, nor for the minute of WaitDelay.
func TestCommandEndsWhatTheProgramStarted(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	cmd := Command(ctx, time.Minute, "sh", "-c", `sleep 300 & echo $! > "$0"; wait`, pidFile)
	var out bytes.Buffer
	cmd.Stdout = &out // a pipe, which the child holds open
	done := make(chan error, 1)
	go func() { done <- cmd.Run() }()
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run waited for the program's child")
	}
	require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
	b, rerr := os.ReadFile(pidFile)
	require.NoError(t, rerr)
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, perr)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	require.Eventually(t, func() bool { return ended(pid) }, 10*time.Second, 10*time.Millisecond, "the child %d still runs", pid)
}

// TestCommandRunsToItsEnd: a program that ends by itself is unaffected.
func TestCommandRunsToItsEnd(t *testing.T) {
	out, err := Command(context.Background(), 0, "sh", "-c", "echo ok").Output()
	require.NoError(t, err)
	require.Equal(t, "ok\n", string(out))
	require.Equal(t, DefaultWaitDelay, Command(context.Background(), 0, "true").WaitDelay)
}

// ended: the process is gone, or a zombie its new parent has not reaped.
func ended(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}
