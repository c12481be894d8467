package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/internal/testbin"
)

// bashCompletion is where Debian's bash-completion keeps the functions
// cobra's bash script calls (_get_comp_words_by_ref).
const bashCompletion = "/usr/share/bash-completion/bash_completion"

// typed is what a user types at a shell's prompt, ending in Tab, and what
// the terminal then shows of the line or the list below it.
type typed struct{ keys, want string }

// TestCompletionInAnInteractiveBash: the completion script, loaded as a
// login shell loads it, completes in a real interactive bash on a terminal
// as a user presses Tab: commands, a model's name from the daemon's
// repository, the list of models of load's --model after a comma (which
// bash's script once never matched: it quoted the comma before comparing),
// and a flag's fixed values.
func TestCompletionInAnInteractiveBash(t *testing.T) {
	if _, err := os.Stat(bashCompletion); err != nil {
		t.Skip("bash-completion is not installed; make test-deps installs it")
	}
	typeInShell(t, "bash", "source "+bashCompletion+"\nsource <(gpuletd completion bash)\nPS1='$ '\n", []typed{
		{"gpuletd mod\t", "gpuletd models "},
		{"gpuletd models show le\t", "gpuletd models show lenet5 "},
		{"gpuletd infer \t\t", "(unavailable: not loaded at start)"},
		{"gpuletd load --model lenet5=100,v\t", `gpuletd load --model lenet5=100\,vgg19 `},
		{"gpuletd events --severity w\t", "gpuletd events --severity warning "},
	})
}

// TestCompletionInAnInteractiveZsh: the same in zsh, its completion system
// loaded as a .zshrc loads it.
func TestCompletionInAnInteractiveZsh(t *testing.T) {
	typeInShell(t, "zsh", "autoload -U compinit; compinit -u\nsource <(gpuletd completion zsh)\nPS1='$ '\n", []typed{
		{"gpuletd mod\t", "gpuletd models "},
		{"gpuletd models show le\t", "gpuletd models show lenet5 "},
		{"gpuletd infer \t", "-- unavailable: not loaded at start"},
		{"gpuletd load --model lenet5=100,v\t", "gpuletd load --model lenet5=100,vgg19 "},
		{"gpuletd events --severity w\t", "gpuletd events --severity warning "},
	})
}

// TestCompletionInFish: fish's own completion engine (complete -C, what
// it runs on Tab) with the fish script loaded.
func TestCompletionInFish(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("fish is not installed; make test-deps installs it")
	}
	env := completionEnv(t)
	for _, tc := range []struct{ line, want string }{
		{"gpuletd infer ", "lenet5\tready\nvgg19\tunavailable: not loaded at start\n"},
		{"gpuletd load --model lenet5=100,v", "lenet5=100,vgg19\n"},
		{"gpuletd events --severity w", "warning\n"},
	} {
		cmd := exec.Command(fish, "--no-config", "-c", "gpuletd completion fish | source; complete -C "+strconv.Quote(tc.line))
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Equal(t, tc.want, string(out), tc.line)
	}
}

// completionEnv is an environment in which gpuletd is on the PATH and its
// completion asks a stand-in daemon that holds lenet5 (ready) and vgg19
// (not loaded).
func completionEnv(t *testing.T) []string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/repository/index" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, `[{"name":"lenet5","version":"1","state":"READY"},{"name":"vgg19","state":"UNAVAILABLE","reason":"not loaded at start"}]`)
	}))
	t.Cleanup(srv.Close)
	bin := testbin.Gpuletd(t)
	return withoutGpuletdEnv("PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "TERM=dumb",
		"GPULETD_LISTEN="+strings.TrimPrefix(srv.URL, "http://"), "GPULETD_STATE_DIR="+t.TempDir())
}

// typeInShell runs shell interactively on a terminal (script(1) gives it
// one) with rc as its start-up file, types each of steps' keys and waits
// for the terminal to show its want, clearing the line after each.
func typeInShell(t *testing.T, shell, rc string, steps []typed) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script (util-linux) is not installed")
	}
	if _, err := exec.LookPath(shell); err != nil {
		t.Skipf("%s is not installed; make test-deps installs it", shell)
	}
	env := completionEnv(t)
	dir := t.TempDir()
	var run string
	switch shell {
	case "bash":
		require.NoError(t, os.WriteFile(filepath.Join(dir, "bashrc"), []byte(rc), 0o600))
		run = "bash --noprofile --rcfile " + filepath.Join(dir, "bashrc") + " -i"
	case "zsh":
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".zshrc"), []byte(rc), 0o600))
		env = append(env, "ZDOTDIR="+dir)
		run = "zsh -i"
	}
	cmd := exec.Command(scriptBin, "-q", "-c", run, "/dev/null")
	cmd.Env = env
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out := &testbin.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	startChild(t, cmd, func() { _ = in.Close() })
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "$ ") }, 10*time.Second, 50*time.Millisecond, "%s's prompt:\n%s", shell, out)

	for _, tc := range steps {
		mark := len(out.String())
		_, err := io.WriteString(in, tc.keys)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return strings.Contains(screen(out.String()[mark:]), tc.want) }, 10*time.Second, 50*time.Millisecond,
			"typing %q in %s shows %q; the terminal:\n%s", tc.keys, shell, tc.want, screen(out.String()))
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
