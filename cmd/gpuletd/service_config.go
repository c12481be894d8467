package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpulet/gpuletd/daemon/config"
)

// installedConfig is where install.sh puts the service's configuration,
// which its unit passes to serve with --config.
const installedConfig = "/etc/gpuletd/gpuletd.yaml"

// serviceConfig is the installed service's configuration, read with this
// process's environment as the command's own was, when the command read
// no configuration file (neither --config nor GPULETD_CONFIG) and one is
// installed at g.installed; nil otherwise, or when it does not load. The
// commands read no file unless told to, so that a daemon run by hand and
// the tests are not steered by an installed service; this is only for
// saying so when the two differ where it matters.
func (g *globalFlags) serviceConfig() (*config.Loaded, string) {
	path := g.unreadInstalled()
	if path == "" {
		return nil, ""
	}
	l, err := config.Load(path, os.Environ())
	if err != nil || l.Config.Validate() != nil {
		return nil, ""
	}
	return l, path
}

// unreadInstalled is the installed service's configuration file when this
// command read no configuration file and one is installed; "" otherwise.
func (g *globalFlags) unreadInstalled() string {
	if g.configFile != "" || os.Getenv(config.EnvConfigFile) != "" || g.installed == "" {
		return ""
	}
	if _, err := os.Stat(g.installed); err != nil {
		return ""
	}
	return g.installed
}

// unreadInstalledNote is what config and doctor say first when they read
// no configuration file though the service has one: what they print is
// then about the defaults, not about the service.
func (g *globalFlags) unreadInstalledNote() string {
	path := g.unreadInstalled()
	if path == "" {
		return ""
	}
	return fmt.Sprintf("note: this command read no configuration file, and the service's is %s: add --config %s for the service's", path, path)
}

// listenHint says, for a command that found no daemon at base, that the
// installed service's configuration gives another listen address; "" when
// it does not (or there is none, or the command read a configuration).
func (g *globalFlags) listenHint(base string) string {
	l, path := g.serviceConfig()
	if l == nil {
		return ""
	}
	theirs, err := daemonURL(l, nil, "")
	if err != nil || theirs == base {
		return ""
	}
	return fmt.Sprintf("this command read no configuration file, and the service's (%s) gives listen %s: add --config %s", path, l.Config.Listen, path)
}

// stateDirHint refuses a command about to act on state_dir dir when the
// installed service's configuration gives another state_dir: a database
// restored, or a profile stored, where the service does not look changes
// nothing it serves.
func (g *globalFlags) stateDirHint(dir string) error {
	l, path := g.serviceConfig()
	if l == nil || filepath.Clean(l.Config.StateDir) == filepath.Clean(dir) {
		return nil
	}
	return &exitError{code: 2, msg: fmt.Sprintf("gpuletd: this command read no configuration file, so its state_dir is %s, but the service's configuration (%s) gives %s: add --config %s",
		dir, path, l.Config.StateDir, path)}
}
