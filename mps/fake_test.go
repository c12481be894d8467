package mps

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeMPS is a state directory for the fake nvidia-cuda-mps-control: what it
// records and the switches that make it misbehave.
type fakeMPS struct {
	state string
	root  string // a short directory for pipe and log directories
}

func newFakeMPS(t *testing.T) fakeMPS {
	t.Helper()
	root, err := os.MkdirTemp("", "mps") // short: Unix socket paths are limited
	require.NoError(t, err)
	f := fakeMPS{state: filepath.Join(root, "state"), root: root}
	require.NoError(t, os.Mkdir(f.state, 0o755))
	t.Setenv("FAKEMPS_STATE", f.state)
	t.Cleanup(func() {
		// Last resort for daemons a failing test left: kill them by their pid files.
		// A test daemon's pipe is <root>/<id>/pipe, a manager's
		// <root>/mps/<device>/pipe.
		var pids []string
		for _, pattern := range []string{"*", "*/*", "*/*/*"} {
			more, _ := filepath.Glob(filepath.Join(root, pattern, "nvidia-cuda-mps-control.pid"))
			pids = append(pids, more...)
		}
		for _, p := range pids {
			if b, err := os.ReadFile(p); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		os.RemoveAll(root)
	})
	return f
}

// dirs returns a pipe and a log directory for a device under the root.
func (f fakeMPS) dirs(id string) (string, string) {
	return filepath.Join(f.root, id, "pipe"), filepath.Join(f.root, id, "log")
}

// records returns what the fake recorded, optionally only lines with a prefix.
func (f fakeMPS) records(t *testing.T, prefixes ...string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.state, "record"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		if len(prefixes) == 0 {
			out = append(out, line)
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(line, p) {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

func (f fakeMPS) set(t *testing.T, name, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(f.state, name), []byte(content), 0o644))
}

func (f fakeMPS) clear(t *testing.T, name string) {
	t.Helper()
	require.NoError(t, os.Remove(filepath.Join(f.state, name)))
}

// count counts recorded lines that start with prefix.
func (f fakeMPS) count(t *testing.T, prefix string) int {
	return len(f.records(t, prefix))
}

// eventually waits for cond, failing the test after a generous bound.
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	require.Eventually(t, cond, 20*time.Second, 5*time.Millisecond, what)
}
