package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gpulet/gpuletd/internal/dirlock"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// fakeDevices records what closeProfileDevices asks of the devices, and
// whether runtime_dir was held against a daemon's start while they closed.
type fakeDevices struct {
	dir          string
	kept, closed bool
	heldAtClose  bool
}

func (f *fakeDevices) KeepMPS() { f.kept = true }

func (f *fakeDevices) Close(context.Context) error {
	f.closed = true
	f.heldAtClose, _ = dirlock.Held(f.dir)
	return nil
}

func TestProfileBesideADaemon(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	holder, beside := daemonBeside(dir)
	require.False(t, beside, "no runtime_dir yet")
	require.Empty(t, holder)
	require.NoDirExists(t, dir, "looking makes nothing")

	daemon, err := dirlock.Lock(dir) // a daemon serving from dir
	require.NoError(t, err)
	holder, beside = daemonBeside(dir)
	require.True(t, beside)
	require.Equal(t, " (pid "+strconv.Itoa(os.Getpid())+")", holder)
	var note bytes.Buffer
	besideNote(&note, dir, holder, "gpu0")
	require.Contains(t, note.String(), "gpuletd (pid ")
	require.Contains(t, note.String(), "serves from runtime_dir "+dir+": this profile is measured beside its gpu-lets on gpu0")

	require.NoError(t, daemon.Close())
	ctx := context.Background()
	for _, tc := range []struct {
		name                     string
		daemonRuns, startedMPS   bool
		wantKept, wantHeldClosed bool
	}{
		// MPS the profile started, taken over by a daemon started since.
		{name: "started, a daemon took it over", daemonRuns: true, startedMPS: true, wantKept: true, wantHeldClosed: true},
		// MPS the profile started, no daemon: it stops with runtime_dir held.
		{name: "started, no daemon", startedMPS: true, wantHeldClosed: true},
		// Borrowed MPS, or none (the CPU): nothing to keep, nothing held.
		{name: "borrowed", daemonRuns: true, wantHeldClosed: true},
		{name: "no MPS", wantHeldClosed: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.daemonRuns {
				daemon, err := dirlock.Lock(dir)
				require.NoError(t, err)
				defer daemon.Close()
			}
			devs := &fakeDevices{dir: dir}
			require.NoError(t, closeProfileDevices(ctx, devs, dir, tc.startedMPS, zap.NewNop()))
			require.True(t, devs.closed)
			require.Equal(t, tc.wantKept, devs.kept)
			require.Equal(t, tc.wantHeldClosed, devs.heldAtClose)
			held, err := dirlock.Held(dir)
			require.NoError(t, err)
			require.Equal(t, tc.daemonRuns, held, "the profile's own hold ends with it")
		})
	}
}

// A profile as another user than the daemon's MPS is refused, saying as
// whom to run it; as the same user it goes on.
func TestProfileBesideADaemonRunsAsItsMPSUser(t *testing.T) {
	pipe := t.TempDir()
	require.NoError(t, mpsUserCheck(pipe, os.Geteuid()))
	require.NoError(t, mpsUserCheck(filepath.Join(pipe, "gone"), os.Geteuid()), "nothing to tell by")
	if os.Geteuid() != 0 {
		t.Skip("only root gives a folder to another user")
	}
	const nobody = 65534
	require.NoError(t, os.Chown(pipe, nobody, nobody))
	err := mpsUserCheck(pipe, 0)
	var ex *exitError
	require.ErrorAs(t, err, &ex)
	require.Equal(t, 2, ex.code)
	require.Contains(t, ex.msg, "runs MPS as nobody (uid 65534), and MPS runs the clients of one user at a time")
	require.Contains(t, ex.msg, "sudo -u nobody gpuletd profile")
}
