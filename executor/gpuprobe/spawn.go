package gpuprobe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/internal/selfexe"
)

// Command is the hidden gpuletd subcommand that runs Probe and prints its
// Result as JSON.
const Command = "probe-engine"

// DefaultTimeout bounds a probe: loading CUDA, cuDNN and a first model takes
// seconds; a hung driver must not hold the daemon's start forever.
const DefaultTimeout = 90 * time.Second

// SpawnOptions run a probe in a child process.
type SpawnOptions struct {
	// Binary is the gpuletd binary; empty: this process's executable.
	Binary string
	// Options are passed as flags.
	Options Options
	// Env is added to this process's environment (CUDA_VISIBLE_DEVICES,
	// LD_LIBRARY_PATH).
	Env []string
	// Timeout bounds the child; 0: DefaultTimeout.
	Timeout time.Duration
}

// Spawn runs the probe in a child and returns its result. A child that
// crashes, hangs or prints no result gives a failed Result saying so, with
// the end of what it wrote.
func Spawn(ctx context.Context, o SpawnOptions) Result {
	r := Result{Provider: o.Options.Provider, Library: o.Options.Library}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := []string{Command, "--provider", o.Options.Provider, "--onnxruntime-library", o.Options.Library}
	if o.Options.ProviderDir != "" {
		args = append(args, "--provider-dir", o.Options.ProviderDir)
	}
	cmd, err := selfexe.Command(ctx, o.Binary, args...) // "": the binary this process runs
	if err != nil {
		r.Error = fmt.Sprintf("probe %s: %v", o.Options.Provider, err)
		return r
	}
	cmd.Env = append(os.Environ(), o.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if err := json.Unmarshal(bytes.TrimSpace(lastLine(stdout.Bytes())), &r); err == nil && (r.OK || r.Error != "") {
		return r
	}
	why := "printed no result"
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		why = fmt.Sprintf("did not finish in %s", timeout)
	case runErr != nil:
		why = "crashed: " + runErr.Error()
	}
	r.Error = fmt.Sprintf("probe %s: the child process %s%s", o.Options.Provider, why, tail(stderr.String()))
	return r
}

// lastLine is the last non-empty line of b.
func lastLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return lines[len(lines)-1]
}

// tail is the end of a child's output, for an error message.
func tail(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return ""
	}
	if len(s) > 400 {
		s = "…" + s[len(s)-400:]
	}
	return ": " + s
}
