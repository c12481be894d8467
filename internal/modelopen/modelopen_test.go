package modelopen

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// script writes an executable shell script of body that stands in for the
// gpuletd binary, its arguments written to args.
func script(t *testing.T, body string) (bin, args string) {
	t.Helper()
	dir := t.TempDir()
	bin, args = filepath.Join(dir, "gpuletd"), filepath.Join(dir, "args")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho \"$@\" > "+args+"\n"+body+"\n"), 0o755))
	return bin, args
}

// crashReport is the start of what the Go runtime writes when a signal
// arrives in C code.
const crashReport = `SIGSEGV: segmentation violation
PC=0x7f00 m=0 sigcode=1 addr=0x0
signal arrived during cgo execution

goroutine 1 gp=0xc000002380 m=0 mp=0x1 [syscall]:`

// InChild runs the open-model command of the binary with the runtime and
// the libraries in order, and says what became of it: opened; the child's
// reason; a crash by its headline; an exit without one by its status and
// last line; no answer in time.
func TestInChild(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		timeout    time.Duration
		want       string // "" for opened
	}{
		{"opened", "exit 0", time.Minute, ""},
		{"cannot open", "echo 'invalid onnx model: Fatal error: x:Op(-1) is not a registered function/op' >&2; exit 3", time.Minute,
			"invalid onnx model: Fatal error: x:Op(-1) is not a registered function/op"},
		{"crashed", "printf '%s\\n' '" + crashReport + "' >&2; kill -SEGV $$", time.Minute,
			"open the model with its custom operator libraries: the process opening it crashed: SIGSEGV: segmentation violation (in C code: ONNX Runtime or a library it loaded)"},
		{"failed otherwise", "echo 'something' >&2; echo 'went wrong' >&2; exit 1", time.Minute,
			"open the model with its custom operator libraries: the process opening it crashed: exit status 1: went wrong"},
		{"no answer", "exec sleep 30", 200 * time.Millisecond,
			"open the model with its custom operator libraries: no answer from the process opening it: context deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, args := script(t, tc.body)
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			err := InChild(ctx, bin, "/lib/libonnxruntime.so.1", "/m/1/model.onnx", []string{"/m/a.so", "/m/b.so"})
			if tc.want == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tc.want)
			}
			got, rerr := os.ReadFile(args)
			require.NoError(t, rerr)
			require.Equal(t, Command+" --onnxruntime-library /lib/libonnxruntime.so.1 --op-library /m/a.so --op-library /m/b.so -- /m/1/model.onnx\n", string(got))
		})
	}
}
