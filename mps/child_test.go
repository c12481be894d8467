package mps

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/mps/execenv"
)

// childEnv, when set, makes the test binary act as an executor would at
// start: read its device environment, pin itself to its cores, say "ready"
// and wait for stdin to close.
const childEnv = "GPULETD_MPS_TEST_CHILD"

func runChild() int {
	env, err := execenv.Decode(os.LookupEnv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := env.ApplyCPU(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}

// startChild runs the test binary as an executor child with env added.
// It returns the child's pid and a function that ends it.
func startChild(t *testing.T, env []string) (int, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "child did not get ready")
	require.Equal(t, "ready\n", line)
	return cmd.Process.Pid, func() {
		stdin.Close()
		_ = cmd.Wait()
	}
}

// allowedCPUs reads Cpus_allowed_list of every thread of a process.
func allowedCPUs(t *testing.T, pid int) []string {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	require.NoError(t, err)
	require.NotEmpty(t, tasks)
	var out []string
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				out = append(out, strings.TrimSpace(v))
			}
		}
	}
	return out
}
