package main

import (
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/internal/dirlock"
	"github.com/gpulet/gpuletd/internal/listenfile"
)

// TestDaemonIsReachedWhereItListens: a command with no --url reaches the
// daemon that holds its configuration's runtime_dir at the addresses that
// daemon recorded there, not at the configuration's listen (a daemon
// started by gpuletd tritonserver on Triton's port 8000, say); a record
// nobody holds, --url, and an HTTPS daemon the configuration gives no
// certificate for leave the address as it was.
func TestDaemonIsReachedWhereItListens(t *testing.T) {
	for _, k := range []string{"GPULETD_CONFIG", "GPULETD_LISTEN", "GPULETD_RUNTIME_DIR"} {
		t.Setenv(k, "")
		require.NoError(t, os.Unsetenv(k))
	}
	run := t.TempDir()
	t.Setenv("GPULETD_RUNTIME_DIR", run)
	t.Setenv("GPULETD_LISTEN", "127.0.0.1:8700")
	base := func(flag string) string {
		d, err := (&globalFlags{}).daemon(io.Discard, flag)
		require.NoError(t, err)
		return d.base
	}
	require.NoError(t, listenfile.Write(run, listenfile.Record{PID: os.Getpid(), Listen: "0.0.0.0:8000"}))
	require.Equal(t, "http://127.0.0.1:8700", base(""), "the record's daemon no longer holds runtime_dir")

	lock, err := dirlock.Lock(run)
	require.NoError(t, err)
	defer lock.Close()
	require.Equal(t, "http://127.0.0.1:8000", base(""), "where the daemon holding runtime_dir listens")
	require.Equal(t, "http://127.0.0.1:9", base("127.0.0.1:9"), "--url wins")

	require.NoError(t, listenfile.Write(run, listenfile.Record{PID: os.Getpid(), Listen: "0.0.0.0:8000", TLS: true}))
	require.Equal(t, "http://127.0.0.1:8700", base(""), "HTTPS, and no certificate in the configuration to trust it by")
}
