package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzLoad feeds arbitrary configuration files and GPULETD_ variables:
// loading must never panic, and what it refuses it refuses as ErrInvalid
// (which serve and doctor name with the file, the field and what is
// allowed).
func FuzzLoad(f *testing.F) {
	f.Add([]byte("listen: 127.0.0.1:8700\nscheduler:\n  policy: deferred\nlimits:\n  max_request_body: 64MiB\n"), "GPULETD_DEFAULT_SLO=50ms")
	f.Add([]byte("devices:\n  - {kind: emulated, type: V100, count: 2}\nmps: {foreground: true}\n"), "GPULETD_STARTUP_MODELS=a,b")
	f.Add([]byte("tls: {cert_file: a, key_file: b}\ntrace: {mode: opentelemetry}\n"), "GPULETD_LIMITS_IDLE_TIMEOUT=1h")
	f.Fuzz(func(t *testing.T, data []byte, env string) {
		l := &Loaded{Config: Default(), File: "gpuletd.yaml", Sources: map[string]Source{}}
		for _, fp := range fieldPaths() {
			l.Sources[fp.path] = Source{Kind: FromDefault}
		}
		err := l.applyFile("gpuletd.yaml", data)
		if err == nil {
			err = l.applyEnv(strings.Split(env, "\n"))
		}
		if err == nil {
			err = l.Config.Validate()
		}
		if err != nil {
			require.True(t, errors.Is(err, ErrInvalid), "%v", err)
			return
		}
		_, err = l.YAML()
		require.NoError(t, err, "a valid configuration prints")
	})
}
