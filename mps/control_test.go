package mps

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

func newTestDaemon(t *testing.T, f fakeMPS, id string, change func(*ControlConfig)) *ControlDaemon {
	t.Helper()
	pipe, logDir := f.dirs(id)
	cfg := ControlConfig{
		DeviceID: id, Binary: fakeControl, PipeDir: pipe, LogDir: logDir, VisibleDevices: "GPU-" + id,
		QueryTimeout: 2 * time.Second, StartTimeout: 5 * time.Second,
	}
	if change != nil {
		change(&cfg)
	}
	return NewControlDaemon(cfg, ExecRunner{}, zaptest.NewLogger(t))
}

func TestControlDaemonLifecycle(t *testing.T) {
	for _, fg := range []bool{false, true} {
		name := map[bool]string{false: "daemonized", true: "foreground"}[fg]
		t.Run(name, func(t *testing.T) {
			f := newFakeMPS(t)
			ctx := context.Background()
			d := newTestDaemon(t, f, "gpu0", func(c *ControlConfig) { c.Foreground = fg })
			pipe, logDir := f.dirs("gpu0")
			require.NoError(t, d.Start(ctx))

			st, err := os.Stat(pipe)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
			_, err = os.Stat(logDir)
			require.NoError(t, err)

			out, err := d.Query(ctx, "set_default_active_thread_percentage 50")
			require.NoError(t, err)
			require.Equal(t, "50\n", out)
			out, err = d.Query(ctx, "get_default_active_thread_percentage")
			require.NoError(t, err)
			require.Equal(t, "50\n", out)
			require.NoError(t, d.Ping(ctx))
			if fg {
				require.NotNil(t, d.Exited())
			} else {
				require.Nil(t, d.Exited())
			}

			require.NoError(t, d.Quit(ctx))
			require.Error(t, d.Ping(ctx), "the daemon is gone after quit")
			require.NoError(t, d.Quit(ctx), "quitting a daemon that is gone is fine")
			// What a foreground daemon prints goes to its log folder, not to
			// gpuletd's standard error (the journal).
			logged, err := os.ReadFile(filepath.Join(logDir, ForegroundLog))
			if fg {
				require.NoError(t, err)
				require.Contains(t, string(logged), "] Cmd:set_default_active_thread_percentage 50\n")
			} else {
				require.ErrorIs(t, err, os.ErrNotExist)
			}

			flag := map[bool]string{false: "-d", true: "-f"}[fg]
			cmds := f.records(t, "start", "cmd")
			split := 0
			for split < len(cmds) && !strings.HasPrefix(cmds[split], "cmd set_") {
				split++
			}
			head, tail := cmds[:split], cmds[split:]
			// No control socket: nothing runs there yet. Start it, then ask
			// once its socket is there.
			wantStart := "start " + flag + " CUDA_VISIBLE_DEVICES=GPU-gpu0 CUDA_MPS_PIPE_DIRECTORY=" + pipe + " CUDA_MPS_LOG_DIRECTORY=" + logDir
			require.Equal(t, wantStart, head[0])
			starts := 0
			for _, c := range head {
				if strings.HasPrefix(c, "start") {
					require.Equal(t, wantStart, c)
					starts++
				} else {
					require.Equal(t, "cmd get_server_list", c)
				}
			}
			require.Equal(t, 1, starts)
			require.Equal(t, []string{wantStart, "cmd get_server_list"}, head)
			require.GreaterOrEqual(t, len(tail), 5)
			require.Equal(t, []string{
				"cmd set_default_active_thread_percentage 50",
				"cmd get_default_active_thread_percentage",
				"cmd get_server_list", // Ping
				"cmd get_server_list", // Quit: still there?
				"cmd quit",
			}, tail[:5])
			for _, c := range tail[5:] {
				require.Equal(t, "cmd get_server_list", c, "after quit only checks that it is gone")
			}
			require.Equal(t, 1, f.count(t, "quit"))
		})
	}
}

func TestControlDaemonAdoptsRunningOne(t *testing.T) {
	f := newFakeMPS(t)
	ctx := context.Background()
	first := newTestDaemon(t, f, "gpu0", nil)
	require.NoError(t, first.Start(ctx))
	second := newTestDaemon(t, f, "gpu0", nil)
	require.NoError(t, second.Start(ctx))
	require.Equal(t, 1, f.count(t, "start"), "the second start adopts the running daemon")
	require.NoError(t, second.Quit(ctx))
}

func TestControlDaemonExisting(t *testing.T) {
	f := newFakeMPS(t)
	ctx := context.Background()
	owner := newTestDaemon(t, f, "shared", nil)
	require.NoError(t, owner.Start(ctx))

	pipe, _ := f.dirs("shared")
	ex := newTestDaemon(t, f, "shared", func(c *ControlConfig) { c.Existing, c.LogDir, c.VisibleDevices = true, "", "" })
	require.NoError(t, ex.Start(ctx))
	require.NoError(t, ex.Quit(ctx), "an existing daemon is never stopped")
	require.NoError(t, ex.Ping(ctx))
	require.Equal(t, 1, f.count(t, "start"))
	require.Zero(t, f.count(t, "cmd quit"))

	require.NoError(t, owner.Quit(ctx))
	err := ex.Start(ctx)
	require.ErrorIs(t, err, ErrMPSDaemon)
	require.ErrorContains(t, err, pipe)
	require.ErrorContains(t, err, "Cannot find MPS control daemon process")
}

func TestControlDaemonFailures(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, f fakeMPS)
		change  func(*ControlConfig)
		wantErr []error
		wantMsg []string
	}{
		{
			name:    "start refused",
			setup:   func(t *testing.T, f fakeMPS) { f.set(t, "fail-start", "") },
			wantErr: []error{ErrMPSDaemon},
			wantMsg: []string{"start MPS control daemon for gpu0", "fake: start refused"},
		},
		{
			name:    "start refused in the foreground",
			setup:   func(t *testing.T, f fakeMPS) { f.set(t, "fail-start", "") },
			change:  func(c *ControlConfig) { c.Foreground = true },
			wantErr: []error{ErrMPSDaemon},
			wantMsg: []string{"exited at start"},
		},
		{
			name:    "start hangs",
			setup:   func(t *testing.T, f fakeMPS) { f.set(t, "hang-start", "") },
			change:  func(c *ControlConfig) { c.StartTimeout = 300 * time.Millisecond },
			wantErr: []error{ErrMPSDaemon, context.DeadlineExceeded},
		},
		{
			name:    "start hangs in the foreground",
			setup:   func(t *testing.T, f fakeMPS) { f.set(t, "hang-start", "") },
			change:  func(c *ControlConfig) { c.StartTimeout, c.Foreground = 300*time.Millisecond, true },
			wantErr: []error{ErrMPSDaemon},
			wantMsg: []string{"no answer within 300ms"},
		},
		{
			name:    "queries hang",
			setup:   func(t *testing.T, f fakeMPS) { f.set(t, "hang-query", "") },
			change:  func(c *ControlConfig) { c.QueryTimeout, c.StartTimeout = 100*time.Millisecond, 400*time.Millisecond },
			wantErr: []error{ErrMPSDaemon, context.DeadlineExceeded},
		},
		{
			name: "pipe directory under a file",
			setup: func(t *testing.T, f fakeMPS) {
				require.NoError(t, os.WriteFile(filepath.Join(f.root, "gpu0"), []byte("x"), 0o644))
			},
			wantErr: []error{ErrPipeDir},
			wantMsg: []string{"prepare MPS pipe directory", "/gpu0/pipe"},
		},
		{
			name: "pipe directory is a file",
			setup: func(t *testing.T, f fakeMPS) {
				pipe, _ := f.dirs("gpu0")
				require.NoError(t, os.MkdirAll(filepath.Dir(pipe), 0o755))
				require.NoError(t, os.WriteFile(pipe, []byte("x"), 0o644))
			},
			wantErr: []error{ErrPipeDir},
			wantMsg: []string{"/gpu0/pipe: MPS directory not usable", "not a directory"},
		},
		{
			name:    "log directory cannot be made",
			setup:   func(t *testing.T, f fakeMPS) {},
			change:  func(c *ControlConfig) { c.LogDir = "/proc/gpuletd-no-such/log" },
			wantErr: []error{ErrPipeDir},
			wantMsg: []string{"prepare MPS log directory /proc/gpuletd-no-such/log"},
		},
		{
			name:    "pipe directory too long for sockets",
			setup:   func(t *testing.T, f fakeMPS) {},
			change:  func(c *ControlConfig) { c.PipeDir = "/tmp/" + strings.Repeat("p", 90) },
			wantErr: []error{ErrPipeDir},
			wantMsg: []string{"too long for Unix sockets"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeMPS(t)
			tt.setup(t, f)
			d := newTestDaemon(t, f, "gpu0", tt.change)
			err := d.Start(context.Background())
			require.Error(t, err)
			for _, w := range tt.wantErr {
				require.ErrorIs(t, err, w)
			}
			for _, m := range tt.wantMsg {
				require.ErrorContains(t, err, m)
			}
			require.Nil(t, d.Exited(), "no foreground child is left behind")
		})
	}
}

func TestControlDaemonNotWritableAsUser(t *testing.T) {
	if os.Geteuid() == 0 {
		// Root writes into mode-0500 directories; the file-in-the-way cases
		// in TestControlDaemonFailures cover it.
		t.Log("running as root: mode bits do not stop writes")
		return
	}
	f := newFakeMPS(t)
	pipe, _ := f.dirs("gpu0")
	require.NoError(t, os.MkdirAll(pipe, 0o500))
	d := newTestDaemon(t, f, "gpu0", nil)
	err := d.Start(context.Background())
	require.ErrorIs(t, err, ErrPipeDir)
	require.ErrorContains(t, err, pipe)
	require.ErrorContains(t, err, "not writable")
}
