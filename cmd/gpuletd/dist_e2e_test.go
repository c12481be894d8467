package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/alerts"
	"github.com/gpulet/gpuletd/dashboards"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/internal/testbin"
)

// TestReleaseArchive packs a release archive (make dist's script) from the
// binary and ONNX Runtime as built here, then uses it as an operator of a
// server without Go would: checks its sha256, unpacks it outside any
// checkout, runs the binary where it was unpacked (it finds its library
// beside itself), and installs it from there (staged, as a package does),
// the installed binary finding the installed library. The same inputs pack
// the same bytes; --gpu without the providers says how to get them.
func TestReleaseArchive(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	for _, tool := range []string{"tar", "gzip", "sha256sum"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "%s packs the archive", tool)
	}
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "dist.sh"))
	require.NoError(t, err)
	pack := func(out string, args ...string) (string, error) {
		cmd := exec.Command(script, append(args, out)...)
		cmd.Env = withoutGpuletdEnv("GPULETD_BIN="+testbin.Gpuletd(t), "GPULETD_ONNXRUNTIME_LIBRARY="+lib,
			"VERSION=9.9.9", "PLATFORM=linux-amd64", "SOURCE_DATE_EPOCH=1700000000")
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	out := t.TempDir()
	say, err := pack(out)
	require.NoError(t, err, say)
	const name = "gpuletd-9.9.9-linux-amd64.tar.gz"
	require.Contains(t, say, filepath.Join(out, name))
	sum := exec.Command("sha256sum", "-c", name+".sha256")
	sum.Dir = out
	b, err := sum.CombinedOutput()
	require.NoError(t, err, "%s", b)

	again := t.TempDir()
	say, err = pack(again)
	require.NoError(t, err, say)
	first, err := os.ReadFile(filepath.Join(out, name+".sha256"))
	require.NoError(t, err)
	second, err := os.ReadFile(filepath.Join(again, name+".sha256"))
	require.NoError(t, err)
	require.Equal(t, string(first), string(second), "the same inputs pack the same bytes")

	unpacked := t.TempDir()
	b, err = exec.Command("tar", "-xzf", filepath.Join(out, name), "-C", unpacked).CombinedOutput()
	require.NoError(t, err, "%s", b)
	top := filepath.Join(unpacked, "gpuletd-9.9.9")
	for _, f := range []string{"bin/gpuletd", "lib/gpuletd/libonnxruntime.so.1", "systemd/install.sh",
		"systemd/gpuletd.service", "systemd/gpuletd-backup.service", "systemd/gpuletd-backup.timer", "systemd/gpuletd.yaml", "README.md", "docs/OPERATIONS.md", "docs/API.md", "alerts/gpuletd.rules.yml", "dashboards/gpuletd.json"} {
		require.FileExists(t, filepath.Join(top, f))
	}
	require.NoFileExists(t, filepath.Join(top, "lib/gpuletd/libonnxruntime_providers_cuda.so"), "the providers go in the -cuda archive")

	// doctor says where the ONNX Runtime it loaded lies.
	doctor := func(bin string) string {
		cmd := exec.Command(bin, "doctor")
		cmd.Env = withoutGpuletdEnv("GPULETD_DEVICES=cpu")
		cmd.Dir = t.TempDir()
		b, _ := cmd.CombinedOutput()
		return string(b)
	}
	require.Contains(t, doctor(filepath.Join(top, "bin", "gpuletd")),
		"1.29.0 at "+filepath.Join(top, "lib", "gpuletd", "libonnxruntime.so.1"), "run where it was unpacked")
	require.Contains(t, doctor(filepath.Join(top, "bin", "gpuletd")), "gpuletd-VERSION-linux-amd64-cuda.tar.gz",
		"the providers' fix names the archive that has them")

	dest := t.TempDir()
	inst := exec.Command(filepath.Join(top, "systemd", "install.sh"), "install", dest, "/opt/gpuletd")
	inst.Env = withoutGpuletdEnv()
	b, err = inst.CombinedOutput()
	require.NoError(t, err, "%s", b)
	unit, err := os.ReadFile(filepath.Join(dest, "etc/systemd/system/gpuletd.service"))
	require.NoError(t, err)
	require.Contains(t, string(unit), "ExecStart=/opt/gpuletd/bin/gpuletd serve")
	require.FileExists(t, filepath.Join(dest, "etc/gpuletd/gpuletd.yaml"))
	completion, err := os.ReadFile(filepath.Join(dest, "opt/gpuletd/share/bash-completion/completions/gpuletd"))
	require.NoError(t, err, "%s", b)
	require.Contains(t, string(completion), "bash completion V2 for gpuletd")
	dashboard, err := os.ReadFile(filepath.Join(dest, "opt/gpuletd/share/gpuletd/grafana-dashboard.json"))
	require.NoError(t, err, "%s", b)
	require.Equal(t, dashboards.Grafana, dashboard)
	rules, err := os.ReadFile(filepath.Join(dest, "opt/gpuletd/share/gpuletd/gpuletd.rules.yml"))
	require.NoError(t, err, "%s", b)
	require.Equal(t, alerts.Rules, rules)
	require.Contains(t, doctor(filepath.Join(dest, "opt/gpuletd/bin/gpuletd")),
		"1.29.0 at "+filepath.Join(dest, "opt/gpuletd/lib/gpuletd/libonnxruntime.so.1"), "installed from the archive")

	// --gpu from a library without its providers beside it.
	bare := filepath.Join(t.TempDir(), onnxrt.LibraryName)
	copyFile(t, lib, bare)
	cmd := exec.Command(script, "--gpu", t.TempDir())
	cmd.Env = withoutGpuletdEnv("GPULETD_BIN="+testbin.Gpuletd(t), "GPULETD_ONNXRUNTIME_LIBRARY="+bare)
	b, err = cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(b), "libonnxruntime_providers_cuda.so is missing: run make deps-gpu")
}
