package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/internal/testbin"
)

// bashCompletion is where Debian's bash-completion keeps the functions
// cobra's bash script calls (_get_comp_words_by_ref).
const bashCompletion = "/usr/share/bash-completion/bash_completion"

// TestCompletionInAnInteractiveBash: the completion script, loaded as a
// login shell loads it, completes in a real interactive bash on a terminal
// as a user presses Tab: commands, a model's name from the daemon's
// repository, the list of models of load's --model after a comma (which
// bash's script once never matched: it quoted the comma before comparing),
// and a flag's fixed values.
func TestCompletionInAnInteractiveBash(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script (util-linux) is not installed")
	}
	if _, err := os.Stat(bashCompletion); err != nil {
		t.Skip("bash-completion is not installed; make test-deps installs it")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/repository/index" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, `[{"name":"lenet5","version":"1","state":"READY"},{"name":"vgg19","state":"UNAVAILABLE","reason":"not loaded at start"}]`)
	}))
	defer srv.Close()

	bin := testbin.Gpuletd(t)
	rc := filepath.Join(t.TempDir(), "bashrc")
	require.NoError(t, os.WriteFile(rc, []byte("source "+bashCompletion+"\nsource <(gpuletd completion bash)\nPS1='$ '\n"), 0o600))
	cmd := exec.Command(scriptBin, "-q", "-c", "bash --noprofile --rcfile "+rc+" -i", "/dev/null")
	cmd.Env = withoutGpuletdEnv("PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "TERM=dumb",
		"GPULETD_LISTEN="+strings.TrimPrefix(srv.URL, "http://"), "GPULETD_STATE_DIR="+t.TempDir())
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out := &testbin.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = in.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "$ ") }, 10*time.Second, 50*time.Millisecond, "bash's prompt:\n%s", out)

	for _, tc := range []struct{ typed, want string }{
		{"gpuletd mod\t", "gpuletd models "},
		{"gpuletd models show le\t", "gpuletd models show lenet5 "},
		{"gpuletd infer \t\t", "(unavailable: not loaded at start)"},
		{"gpuletd load --model lenet5=100,v\t", `gpuletd load --model lenet5=100\,vgg19 `},
		{"gpuletd events --severity w\t", "gpuletd events --severity warning "},
	} {
		mark := len(out.String())
		_, err := io.WriteString(in, tc.typed)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return strings.Contains(screen(out.String()[mark:]), tc.want) }, 10*time.Second, 50*time.Millisecond,
			"typing %q shows %q; the terminal:\n%s", tc.typed, tc.want, screen(out.String()))
		_, err = io.WriteString(in, "\x15") // Ctrl-U: the line typed is dropped
		require.NoError(t, err)
	}
	_, err = io.WriteString(in, "exit\n")
	require.NoError(t, err)
}

// screen is what a terminal shows of out: readline moves the cursor back
// (backspace, carriage return) to write over what it wrote, and rings the
// bell.
func screen(out string) string {
	var lines []string
	var line []rune
	at := 0
	for _, r := range out {
		switch r {
		case '\n':
			lines = append(lines, string(line))
			line, at = nil, 0
		case '\r':
			at = 0
		case '\b':
			at = max(at-1, 0)
		case '\a':
		default:
			if at < len(line) {
				line[at] = r
			} else {
				line = append(line, r)
			}
			at++
		}
	}
	return strings.Join(append(lines, string(line)), "\n")
}
