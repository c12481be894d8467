package mps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTrimLogs: a log past the limit is copied aside and emptied, and a
// daemon that keeps appending to it writes from its start again; smaller
// logs and other files stay as they are.
func TestTrimLogs(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("[2026-12-04 16:55:04.533 Control  2184] Cmd:get_server_list\n", 20)
	write := func(name, data string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600))
	}
	write("control.log", big)
	write("server/server.log", big)
	write("small.log", "one line\n")
	write("notes.txt", big)
	// The daemon's own handle, appending, as MPS and a foreground daemon's
	// output do.
	f, err := os.OpenFile(filepath.Join(dir, "control.log"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	defer f.Close()

	limit := int64(len(big) - 1)
	require.NoError(t, trimLogs(dir, limit))
	for _, name := range []string{"control.log", "server/server.log"} {
		st, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Zero(t, st.Size(), name)
		kept, err := os.ReadFile(filepath.Join(dir, name+".1"))
		require.NoError(t, err)
		require.Equal(t, big, string(kept), name)
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
