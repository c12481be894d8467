package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/sim/loadgen"
)

// clearGpuletdEnv unsets every GPULETD_ variable for the test: the
// commands then read the defaults, as on a node whose operator set none.
func clearGpuletdEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GPULETD_") {
			t.Setenv(k, "") // restored when the test ends
			require.NoError(t, os.Unsetenv(k))
		}
	}
}

// installed writes a service configuration and returns its path.
func installed(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gpuletd.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o644))
	return path
}

// A command that finds no daemon at the default address says where the
// installed service's configuration has it listen, and only then.
func TestNoDaemonHintsAtTheServiceConfig(t *testing.T) {
	refused := fmt.Errorf("%w: dial tcp: %w", loadgen.ErrUnreachable, syscall.ECONNREFUSED)
	other := installed(t, "listen: 127.0.0.1:9870\n")
	same := installed(t, "listen: 127.0.0.1:8700\n")
	cases := []struct {
		name, installed, config, env, url string
		hint                              bool
	}{
		{name: "the service listens elsewhere", installed: other, hint: true},
		{name: "the service listens at the default", installed: same},
		{name: "no service installed", installed: filepath.Join(t.TempDir(), "none.yaml")},
		{name: "--config given", installed: other, config: same},
		{name: "GPULETD_CONFIG given", installed: other, env: "GPULETD_CONFIG=" + same},
		{name: "GPULETD_LISTEN given: the service's is overridden alike", installed: other, env: "GPULETD_LISTEN=127.0.0.1:9871"},
		{name: "--url given", installed: other, url: "127.0.0.1:8700"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clearGpuletdEnv(t)
			if k, v, ok := strings.Cut(tc.env, "="); ok {
				t.Setenv(k, v)
			}
			g := &globalFlags{installed: tc.installed, configFile: tc.config}
			d, err := g.daemon(io.Discard, tc.url)
			require.NoError(t, err)
			msg := d.fail(refused).Error()
			require.True(t, strings.HasPrefix(msg, "no gpuletd answers at "+d.base+": is it running?"), msg)
			want := "(this command read no configuration file, and the service's (" + other + ") gives listen 127.0.0.1:9870: add --config " + other + ")"
			if tc.hint {
				require.True(t, strings.HasSuffix(msg, want), msg)
			} else {
				require.NotContains(t, msg, "service's", msg)
			}
		})
	}
}

// Restore and profile refuse a state_dir the installed service does not
// use, before they touch anything.
func TestRestoreRefusesAStateDirTheServiceDoesNotUse(t *testing.T) {
	clearGpuletdEnv(t)
	svc := installed(t, "state_dir: /srv/gpuletd\n")
	g := &globalFlags{installed: svc}
	for _, cmd := range []*cobra.Command{newRestoreCmd(g), newProfileCmd(g)} {
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs([]string{filepath.Join(t.TempDir(), "b.db")})
		err := cmd.Execute()
		var ee *exitError
		require.ErrorAs(t, err, &ee, cmd.Name())
		require.Equal(t, 2, ee.code)
		require.Equal(t, "gpuletd: this command read no configuration file, so its state_dir is /var/lib/gpuletd, but the service's configuration ("+svc+") gives /srv/gpuletd: add --config "+svc, ee.msg)
	}

	// The same state_dir given to both (the environment applies to both):
	// on to the backup itself, which is missing here.
	t.Setenv("GPULETD_STATE_DIR", t.TempDir())
	require.NoError(t, g.stateDirHint(os.Getenv("GPULETD_STATE_DIR")))
}

// config and doctor say first that they describe the defaults, not the
// installed service's configuration, when they read none.
func TestConfigNotesTheServiceConfig(t *testing.T) {
	clearGpuletdEnv(t)
	svc := installed(t, "listen: 127.0.0.1:9870\n")
	for _, g := range []*globalFlags{{installed: svc}, {installed: svc, configFile: svc}} {
		cmd := newConfigCmd(g)
		var out, errb bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errb)
		cmd.SetArgs(nil)
		require.NoError(t, cmd.Execute())
		if g.configFile == "" {
			require.Equal(t, "note: this command read no configuration file, and the service's is "+svc+": add --config "+svc+" for the service's\n", errb.String())
			require.Contains(t, out.String(), "listen: 127.0.0.1:8700")
		} else {
			require.Empty(t, errb.String())
			require.Contains(t, out.String(), "listen: 127.0.0.1:9870")
		}
	}
}
