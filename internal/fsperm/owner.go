package fsperm

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// GiveToDirOwner gives path the owner and group of the folder it is in
// when this process runs as root, and does nothing otherwise: a file that
// a command run with sudo writes into the service's folder (a restored
// database, a lock file) stays one the service's user can write.
func GiveToDirOwner(path string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	fi, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("give %s to its folder's owner: %w", path, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if err := os.Chown(path, int(st.Uid), int(st.Gid)); err != nil {
		return fmt.Errorf("give %s to its folder's owner: %w", path, err)
	}
	return nil
}
