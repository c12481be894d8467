// Package selfexe runs this process's own binary again: the daemon starts
// its executors and its GPU probe as `gpuletd executor` and `gpuletd
// probe` of the binary it runs, so that the two sides of their protocol
// are always one version.
//
// os.Executable gives the path the binary was started from, and an
// upgrade (make install, a release's install.sh) puts the new binary at
// that path while the old daemon serves on until its restart: an executor
// it started from the path in between (a re-plan, a restart after a
// crash) ran the new release beside the old daemon. On Linux
// /proc/self/exe opens the binary the process runs, whatever is at its
// path now, so that is what runs.
package selfexe

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// procSelf is the running binary as Linux gives it to the process itself.
const procSelf = "/proc/self/exe"

// own returns what to exec to run this process's own binary (path) and
// the name to give it as argv[0] (name: the path it was started from, as
// ps shows it). Without /proc, path is that name.
func own() (path, name string, err error) {
	name, err = os.Executable()
	if err != nil {
		return "", "", fmt.Errorf("find own binary: %w", err)
	}
	if _, err := os.Stat(procSelf); err == nil {
		return procSelf, name, nil
	}
	return name, name, nil
}

// Command is exec.CommandContext of binary with args, or when binary is
// "" of this process's own binary (own), its argv[0] the path it was
// started from.
func Command(ctx context.Context, binary string, args ...string) (*exec.Cmd, error) {
	path, name := binary, binary
	if binary == "" {
		var err error
		if path, name, err = own(); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Args[0] = name
	return cmd, nil
}
