package systemd_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUnitVerifies runs systemd-analyze verify on the shipped unit (with
// ExecStart pointing at an executable that exists here) and requires it to
// say nothing: unknown keys and bad values are only warnings to systemd, so
// any output is a failure.
func TestUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("SKIPPED: systemd-analyze is not installed; make test-deps installs it")
	}
	unit, err := os.ReadFile("gpuletd.service")
	require.NoError(t, err)
	require.Contains(t, string(unit), "ExecStart=/usr/local/bin/gpuletd serve")
	tmp := filepath.Join(t.TempDir(), "gpuletd.service")
	require.NoError(t, os.WriteFile(tmp, bytes.ReplaceAll(unit, []byte("/usr/local/bin/gpuletd"), []byte("/bin/true")), 0o644))
	out, err := exec.Command(analyze, "verify", tmp).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify must not warn")

	// The backup's service and timer, verified together (a timer names
	// its service).
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"gpuletd-backup.service", "gpuletd-backup.timer"} {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, bytes.ReplaceAll(b, []byte("/usr/local/bin/gpuletd"), []byte("/bin/true")), 0o644))
		paths = append(paths, p)
	}
	out, err = exec.Command(analyze, append([]string{"verify"}, paths...)...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify must not warn")

	// The check can fail: a typo is reported.
	bad := filepath.Join(t.TempDir(), "gpuletd.service")
	require.NoError(t, os.WriteFile(bad, bytes.Replace(bytes.ReplaceAll(unit, []byte("/usr/local/bin/gpuletd"), []byte("/bin/true")),
		[]byte("Type=notify"), []byte("Type=notify\nRestrat=always"), 1), 0o644))
	out, _ = exec.Command(analyze, "verify", bad).CombinedOutput()
	require.Contains(t, string(out), "Restrat")
}

// TestUnitDeclaresWhatOperationsNeed checks the settings the daemon relies on.
func TestUnitDeclaresWhatOperationsNeed(t *testing.T) {
	unit, err := os.ReadFile("gpuletd.service")
	require.NoError(t, err)
	for _, line := range []string{
		"Type=notify", "ExecReload=/bin/kill -HUP $MAINPID", "Restart=on-failure", "WatchdogSec=",
		"User=gpuletd", "Group=gpuletd", "RuntimeDirectory=gpuletd", "StateDirectory=gpuletd",
		"NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
		"ReadWritePaths=/var/lib/gpuletd /run/gpuletd", "DeviceAllow=char-nvidia-frontend rw",
		"OOMPolicy=continue", // an executor killed for memory is restarted by the daemon, not the service stopped
	} {
		require.Contains(t, string(unit), "\n"+line, line)
	}
}

// TestBackupUnits checks what the daily backup relies on: it runs the
// backup command into the folder install.sh makes, as the service's user,
// keeping two weeks, once a day, catching up a day missed.
func TestBackupUnits(t *testing.T) {
	svc, err := os.ReadFile("gpuletd-backup.service")
	require.NoError(t, err)
	for _, line := range []string{
		"Type=oneshot", "ExecStart=/usr/local/bin/gpuletd backup --config /etc/gpuletd/gpuletd.yaml --keep 14 /var/backups/gpuletd",
		"User=gpuletd", "ProtectSystem=strict", "ReadWritePaths=-/var/backups/gpuletd -/var/lib/gpuletd",
	} {
		require.Contains(t, string(svc), "\n"+line+"\n", line)
	}
	timer, err := os.ReadFile("gpuletd-backup.timer")
	require.NoError(t, err)
	for _, line := range []string{"OnCalendar=daily", "Persistent=true", "WantedBy=timers.target"} {
		require.Contains(t, string(timer), "\n"+line+"\n", line)
	}
	script, err := os.ReadFile("install.sh")
	require.NoError(t, err)
	require.Contains(t, string(script), "/var/backups/gpuletd", "install.sh makes the backups' folder")
}

// TestStagedInstallAndUninstall installs into a DESTDIR and removes again,
// keeping the configuration.
func TestStagedInstallAndUninstall(t *testing.T) {
	dest := t.TempDir()
	bin := filepath.Join(t.TempDir(), "gpuletd")
	// It writes the shell completions it is asked for, as gpuletd does.
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n[ \"$1\" = completion ] && echo \"completion for $2\"\n"), 0o755))
	libDir := t.TempDir()
	lib := filepath.Join(libDir, "libonnxruntime.so.1")
	require.NoError(t, os.WriteFile(lib, []byte("lib"), 0o644))
	// make deps-gpu leaves the providers and licences beside the core.
	require.NoError(t, os.WriteFile(filepath.Join(libDir, "libonnxruntime_providers_cuda.so"), []byte("cuda"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(libDir, "licenses"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(libDir, "licenses", "onnxruntime-LICENSE"), []byte("MIT"), 0o644))
	run := func(args ...string) string {
		cmd := exec.Command("./install.sh", args...)
		cmd.Env = append(os.Environ(), "GPULETD_BIN="+bin, "GPULETD_ONNXRUNTIME_LIBRARY="+lib)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	installed := run("install", dest, "/opt/gpuletd")
	require.Contains(t, installed, "/opt/gpuletd/bin/gpuletd doctor --config /etc/gpuletd/gpuletd.yaml checks", "what to run first")
	unit, err := os.ReadFile(filepath.Join(dest, "etc/systemd/system/gpuletd.service"))
	require.NoError(t, err)
	require.Contains(t, string(unit), "ExecStart=/opt/gpuletd/bin/gpuletd serve")
	backup, err := os.ReadFile(filepath.Join(dest, "etc/systemd/system/gpuletd-backup.service"))
	require.NoError(t, err)
	require.Contains(t, string(backup), "ExecStart=/opt/gpuletd/bin/gpuletd backup ")
	require.FileExists(t, filepath.Join(dest, "etc/systemd/system/gpuletd-backup.timer"))
	for _, f := range []string{"opt/gpuletd/bin/gpuletd", "opt/gpuletd/lib/gpuletd/libonnxruntime.so.1", "etc/gpuletd/gpuletd.yaml",
		"opt/gpuletd/lib/gpuletd/libonnxruntime_providers_cuda.so", "opt/gpuletd/lib/gpuletd/licenses/onnxruntime-LICENSE",
		"opt/gpuletd/share/gpuletd/gpuletd.rules.yml", "opt/gpuletd/share/gpuletd/grafana-dashboard.json"} {
		require.FileExists(t, filepath.Join(dest, f))
	}
	completions := map[string]string{"bash": "opt/gpuletd/share/bash-completion/completions/gpuletd",
		"zsh": "opt/gpuletd/share/zsh/site-functions/_gpuletd", "fish": "opt/gpuletd/share/fish/vendor_completions.d/gpuletd.fish"}
	for shell, f := range completions {
		got, err := os.ReadFile(filepath.Join(dest, f))
		require.NoError(t, err)
		require.Equal(t, "completion for "+shell+"\n", string(got), "written by the installed binary")
	}
	// A second install keeps an edited configuration.
	conf := filepath.Join(dest, "etc/gpuletd/gpuletd.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("listen: 127.0.0.1:9999\n"), 0o644))
	out := run("install", dest, "/opt/gpuletd")
	require.Contains(t, out, "kept")
	got, _ := os.ReadFile(conf)
	require.Equal(t, "listen: 127.0.0.1:9999\n", string(got))

	run("uninstall", dest, "/opt/gpuletd")
	require.NoFileExists(t, filepath.Join(dest, "opt/gpuletd/bin/gpuletd"))
	require.NoDirExists(t, filepath.Join(dest, "opt/gpuletd/lib/gpuletd"), "libraries, providers and licences are removed")
	require.NoFileExists(t, filepath.Join(dest, "etc/systemd/system/gpuletd.service"))
	require.NoFileExists(t, filepath.Join(dest, "etc/systemd/system/gpuletd-backup.service"))
	require.NoFileExists(t, filepath.Join(dest, "etc/systemd/system/gpuletd-backup.timer"))
	require.FileExists(t, conf, "uninstall keeps the configuration")
	require.NoDirExists(t, filepath.Join(dest, "opt/gpuletd/share/gpuletd"), "the alerting rules and the dashboard are removed")
	for _, f := range completions {
		require.NoFileExists(t, filepath.Join(dest, f))
	}

	// A binary that cannot run here (a cross build) installs without them.
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\nexit 1\n"), 0o755))
	out = run("install", dest, "/opt/gpuletd")
	require.Contains(t, out, "install.sh: /opt/gpuletd/bin/gpuletd did not run here: no zsh completion written (where it runs: /opt/gpuletd/bin/gpuletd completion zsh >/opt/gpuletd/share/zsh/site-functions/_gpuletd)\n")
	for _, f := range completions {
		require.NoFileExists(t, filepath.Join(dest, f))
	}
}
