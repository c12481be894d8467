package daemon

import (
	"bufio"
	"io"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// holdWithSQLiteShell holds the database at path locked for writing as an
// operator's sqlite3 shell left inside BEGIN IMMEDIATE does, until the test
// ends; it returns the shell's pid once the lock is held.
func holdWithSQLiteShell(t *testing.T, path string) int {
	t.Helper()
	bin, err := exec.LookPath("sqlite3")
	require.NoError(t, err, "the sqlite3 shell (make test-deps installs it)")
	cmd := exec.Command(bin, path)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = stdin.Close() // the shell ends, its transaction with it
		_, _ = io.Copy(io.Discard, stdout)
		require.NoError(t, cmd.Wait())
	})
	_, err = io.WriteString(stdin, "BEGIN IMMEDIATE;\nSELECT 'held';\n")
	require.NoError(t, err)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "held\n", line)
	return cmd.Process.Pid
}
