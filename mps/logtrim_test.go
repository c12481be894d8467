package mps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTrimLogs: a log past the limit has its end copied aside and is
// emptied, and a daemon that keeps appending to it writes from its start
// again; smaller logs and other files stay as they are.
func TestTrimLogs(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("[2026-12-04 16:55:04.533 Control  2184] Cmd:get_server_list\n", 700) // 43 KB
	write := func(name, data string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600))
	}
	write("control.log", big)
	write("server/server.log", big)
	write("small.log", "one line\n")
	write("notes.txt", big)
	// The daemon's own handle, appending, as a foreground daemon's output.
	f, err := os.OpenFile(filepath.Join(dir, "control.log"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	defer f.Close()

	const limit = 16 << 10
	require.NoError(t, trimLogs(dir, limit))
	for _, name := range []string{"control.log", "server/server.log"} {
		st, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Zero(t, st.Size(), name)
		kept, err := os.ReadFile(filepath.Join(dir, name+".1"))
		require.NoError(t, err)
		require.Equal(t, big[len(big)-limit:], string(kept), "%s: its last %d bytes", name, limit)
	}
	for name, want := range map[string]string{"small.log": "one line\n", "notes.txt": big} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Equal(t, want, string(got), name)
	}
	_, err = f.WriteString("after\n")
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(dir, "control.log"))
	require.NoError(t, err)
	require.Equal(t, "after\n", string(got), "the daemon writes on from the start")

	require.NoError(t, trimLogs(dir, limit), "nothing past the limit now")
	require.NoError(t, trimLogs(filepath.Join(dir, "missing"), limit))
}

// TestTrimLogsOfADaemonThatDoesNotAppend: its writes after the emptying
// land past a hole; the file is not trimmed again until it holds the limit
// in data, and the copy is its end, without the hole.
func TestTrimLogsOfADaemonThatDoesNotAppend(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "control.log")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	require.NoError(t, err)
	defer f.Close()
	line := strings.Repeat("x", 99) + "\n"
	_, err = f.WriteString(strings.Repeat(line, 400)) // 40 KB
	require.NoError(t, err)
	const limit = 16 << 10
	require.NoError(t, trimLogs(dir, limit))
	_, err = f.WriteString("after\n") // at offset 40 KB: a hole before it
	require.NoError(t, err)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, int64(400*len(line)+6), st.Size())
	require.NoError(t, os.Remove(path+".1"))
	require.NoError(t, trimLogs(dir, limit))
	_, err = os.Stat(path + ".1")
	require.ErrorIs(t, err, os.ErrNotExist, "a hole is not data: nothing to trim")

	_, err = f.WriteString(strings.Repeat(line, 200)) // 20 KB of data past the hole
	require.NoError(t, err)
	require.NoError(t, trimLogs(dir, limit))
	kept, err := os.ReadFile(path + ".1")
	require.NoError(t, err)
	require.Len(t, kept, limit)
	require.NotContains(t, string(kept), "\x00", "the hole is not copied")
}
