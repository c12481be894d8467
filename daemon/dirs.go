package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/gpulet/gpuletd/internal/fsperm"
)

// The folders the daemon needs are checked before anything is started, so
// that a folder its user may not read or write stops it with what to do,
// instead of a daemon that starts and then serves nothing.

// checkRepository fails with what to do when the model repository folder is
// missing or its user may not read it.
func checkRepository(root string) error {
	st, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("model repository %s: %w: the user gpuletd runs as (uid %d) may not reach it; give it read access, or point model_repository (GPULETD_MODEL_REPOSITORY) at a folder it may read",
			root, err, os.Geteuid())
	case err != nil || !st.IsDir():
		return fmt.Errorf("model repository %s does not exist: create it, point model_repository (GPULETD_MODEL_REPOSITORY) at yours, or write a demo one with: gpuletd models synth %s", root, root)
	}
	if err := unix.Access(root, unix.R_OK|unix.X_OK); err != nil {
		return fmt.Errorf("model repository %s: %w: the user gpuletd runs as (uid %d) may not read it; give it read access, or point model_repository (GPULETD_MODEL_REPOSITORY) at a folder it may read",
			root, err, os.Geteuid())
	}
	return nil
}

// checkRuntimeDir makes the runtime folder if it is missing and fails with
// what to do when its user may not make or write it: the executors' sockets
// and the MPS pipes go there, and without them no model is served.
func checkRuntimeDir(dir string) error {
	const elsewhere = "; or point runtime_dir (GPULETD_RUNTIME_DIR) at a folder this user may write"
	if err := os.MkdirAll(dir, 0o750); err != nil {
		if why := fsperm.WhyNoMkdir(dir); why != nil {
			return fmt.Errorf("runtime_dir %s: %w: %w%s", dir, err, why, elsewhere)
		}
		return fmt.Errorf("runtime_dir %s: %w%s", dir, err, elsewhere)
	}
	if why := fsperm.WhyNotWritable(dir); why != nil {
		return fmt.Errorf("runtime_dir %s: %w%s", dir, why, elsewhere)
	}
	return nil
}
