package mps

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/gpulet/gpuletd/internal/atomicfile"
)

// MaxMPSLog is the size past which a log in the MPS log folder of a daemon
// gpuletd started is moved aside. The control daemon logs every query, and
// gpuletd's health query every few seconds alone adds a few MB a day; the
// folder is under runtime_dir, usually the memory-backed /run.
const MaxMPSLog = 16 << 20

// trimLogs keeps each *.log in dir, and in its folders one level down (a
// server's own), under limit bytes of data: a larger one has its last
// limit bytes copied to NAME.1, replacing the last copy, and is emptied in
// place, as logrotate's copytruncate does, since the daemons keep it open.
// What is written between the copy and the emptying is lost. A daemon that
// does not append goes on writing at its old offset, past a hole: the
// check counts the blocks a file holds, not its length, and the copy takes
// its end, so that the hole is never copied.
func trimLogs(dir string, limit int64) error {
	var errs []error
	for _, pattern := range []string{"*.log", filepath.Join("*", "*.log")} {
		paths, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return fmt.Errorf("trim MPS logs in %s: %w", dir, err)
		}
		for _, path := range paths {
			if err := trimLog(path, limit); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func trimLog(path string, limit int64) error {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // gone since the glob
	}
	if err != nil {
		return fmt.Errorf("trim MPS log: %w", err)
	}
	held := st.Size()
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		held = min(held, sys.Blocks*512)
	}
	if !st.Mode().IsRegular() || held <= limit {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("trim MPS log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(max(st.Size()-limit, 0), io.SeekStart); err != nil {
		return fmt.Errorf("trim MPS log: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return fmt.Errorf("trim MPS log: %w", err)
	}
	if err := atomicfile.Write(path+".1", data, 0o600); err != nil {
		return fmt.Errorf("trim MPS log: %w", err)
	}
	if err := os.Truncate(path, 0); err != nil {
		return fmt.Errorf("trim MPS log: %w", err)
	}
	return nil
}
