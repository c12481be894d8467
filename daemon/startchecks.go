package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/internal/fsperm"
)

// The folders and addresses the daemon needs are checked before anything
// is started, so that one its user may not use stops it with what to do,
// instead of a daemon that starts and then serves nothing.

// checkRepositories fails with what to do when a model repository folder
// of cfg is missing or its user may not read it.
func checkRepositories(cfg config.Config) error {
	for i, root := range cfg.ModelRepositories() {
		if err := checkRepository(i, root); err != nil {
			return err
		}
	}
	return nil
}

// checkRepository fails with what to do when model repository i of
// Config.ModelRepositories, root, is missing or its user may not read it.
func checkRepository(i int, root string) error {
	knob := "model_repository (GPULETD_MODEL_REPOSITORY)"
	if i > 0 {
		knob = config.RepositoryField(i) + " (GPULETD_EXTRA_MODEL_REPOSITORIES)"
	}
	st, err := os.Stat(root)
	if err == nil {
		err = unix.Access(root, unix.R_OK|unix.X_OK)
	}
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("model repository %s: %w: the user gpuletd runs as (uid %d) may not read it; give it read access, or point %s at a folder it may read%s",
			root, err, os.Geteuid(), knob, sandboxHint(root, false))
	case err != nil || !st.IsDir():
		return fmt.Errorf("model repository %s does not exist: create it, point %s at yours, or write a demo one with: gpuletd models synth %s%s",
			root, knob, root, sandboxHint(root, false))
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
			return fmt.Errorf("runtime_dir %s: %w: %w%s%s", dir, err, why, elsewhere, writeHint(why, dir))
		}
		return fmt.Errorf("runtime_dir %s: %w%s%s", dir, err, elsewhere, sandboxHint(dir, true))
	}
	if why := fsperm.WhyNotWritable(dir); why != nil {
		return fmt.Errorf("runtime_dir %s: %w%s%s", dir, why, elsewhere, writeHint(why, dir))
	}
	return nil
}

// The unit gpuletd ships (systemd/gpuletd.service) sandboxes the service:
// it may write only these folders (ProtectSystem=strict, ReadWritePaths)
// and does not see the homes (ProtectHome=yes).
var (
	unitWritable = []string{"/var/lib/gpuletd", "/run/gpuletd"}
	unitHidden   = []string{"/home", "/root", "/run/user"}
)

// underSystemd tells whether the daemon runs as a systemd service (systemd
// sets INVOCATION_ID for every unit it starts).
func underSystemd() bool { return os.Getenv("INVOCATION_ID") != "" }

// writeHint is sandboxHint for a folder that why (from fsperm) says cannot
// be written: only a read-only file system may be the unit's doing.
func writeHint(why error, dir string) string {
	if !errors.Is(why, fsperm.ErrReadOnlyFS) {
		return ""
	}
	return sandboxHint(dir, true)
}

// sandboxHint says what to change in the service's unit when the daemon
// runs as a systemd service and dir lies where its sandbox forbids (write:
// outside the folders it may write; else: under the homes it does not
// see): the folder itself may be fine, and only the unit in the way. Empty
// otherwise.
func sandboxHint(dir string, write bool) string {
	if !underSystemd() {
		return ""
	}
	within := func(roots []string) bool {
		for _, r := range roots {
			if dir == r || strings.HasPrefix(dir, r+"/") {
				return true
			}
		}
		return false
	}
	switch {
	case within(unitHidden):
		return "; the service does not see " + strings.Join(unitHidden, ", ") +
			" (ProtectHome=yes in its unit): move the folder, or run systemctl edit gpuletd and add [Service] ProtectHome=read-only"
	case write && !within(unitWritable):
		return "; the service may write only " + strings.Join(unitWritable, " and ") +
			" (ProtectSystem=strict in its unit): run systemctl edit gpuletd and add [Service] ReadWritePaths=" + dir
	}
	return ""
}

// inUseHint says what to do when addr, from the configuration's field (env
// its variable), is taken by another process; empty for other errors.
func inUseHint(err error, addr, field, env string) string {
	if !errors.Is(err, unix.EADDRINUSE) {
		return ""
	}
	port := addr
	if _, p, splitErr := net.SplitHostPort(addr); splitErr == nil {
		port = p
	}
	return fmt.Sprintf("; another process listens there (ss -ltnp 'sport = :%s' names it): stop it, or give gpuletd another address in %s (%s)", port, field, env)
}

// rootOverAnotherUsersState warns of a run as root over a state_dir that
// belongs to another user (the service's, most often: `sudo gpuletd serve`
// tried beside an installed service): what the run makes there (the
// database's log, uploads, traces) would be root's, and the service could
// then not write it. Empty when that is not the case.
func rootOverAnotherUsersState(euid int, stateDir string, owner func(string) (uid uint32, name string, ok bool)) string {
	if euid != 0 {
		return ""
	}
	uid, name, ok := owner(stateDir)
	if !ok || uid == 0 {
		return ""
	}
	return fmt.Sprintf("running as root over state_dir %s, which belongs to %s: what this run makes there will be root's, and a daemon run as %s (the service) may then not write it; "+
		"run it as that user (sudo -u %s gpuletd serve …), or give it back after (chown -R %s %s)", stateDir, name, name, name, name, stateDir)
}
