package listenfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/internal/dirlock"
)

func TestLiveWhileItsDaemonHoldsTheDirectory(t *testing.T) {
	dir := t.TempDir()
	r := Record{PID: os.Getpid(), Listen: "0.0.0.0:8000", GRPCListen: "0.0.0.0:8001"}
	require.NoError(t, Write(dir, r))

	_, ok := Live(dir)
	require.False(t, ok, "no process holds the lock: a record a crash left names nobody")

	lock, err := dirlock.Lock(dir) // names this process, as a daemon's does
	require.NoError(t, err)
	got, ok := Live(dir)
	require.True(t, ok)
	require.Equal(t, r, got)
	url, err := got.URL()
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:8000", url)

	require.NoError(t, Write(dir, Record{PID: os.Getpid() + 1, Listen: "127.0.0.1:9"}))
	_, ok = Live(dir)
	require.False(t, ok, "a record of another process than the lock's holder")

	require.NoError(t, Remove(dir, os.Getpid()))
	require.FileExists(t, filepath.Join(dir, FileName), "another daemon's record stays")
	require.NoError(t, Write(dir, r))
	require.NoError(t, Remove(dir, os.Getpid()))
	require.NoFileExists(t, filepath.Join(dir, FileName))
	_, ok = Live(dir)
	require.False(t, ok, "no record")
	require.NoError(t, Remove(dir, os.Getpid()), "nothing to remove")

	require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), []byte("{not json"), 0o600))
	_, ok = Live(dir)
	require.False(t, ok, "a record that cannot be read")
	require.NoError(t, lock.Close())
}

func TestURL(t *testing.T) {
	for _, tc := range []struct {
		listen string
		tls    bool
		want   string
	}{
		{"127.0.0.1:8700", false, "http://127.0.0.1:8700"},
		{":8000", false, "http://127.0.0.1:8000"},
		{"0.0.0.0:8000", true, "https://127.0.0.1:8000"},
		{"[::]:8000", false, "http://[::1]:8000"},
		{"localhost:8000", false, "http://localhost:8000"},
	} {
		t.Run(tc.listen, func(t *testing.T) {
			got, err := Record{Listen: tc.listen, TLS: tc.tls}.URL()
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	_, err := Record{Listen: "8000"}.URL()
	require.ErrorContains(t, err, `read listen address "8000"`)
}
