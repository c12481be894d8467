package executor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// A running file says which requests the executor's engine is running
// now, in memory the kernel keeps after the process dies: when a request
// crashes the process (a custom operator's bug, a fault in ONNX Runtime),
// or its run never ends and the executor exits (ErrRunHung), the spawning
// daemon reads from it which requests were in the batch that ran
// (Process.Running). It is one page, mapped shared: a little-endian
// count, then that many request ids (a request with several rows in the
// batch is named once for each), written before a run and cleared after.
// Its writes are plain stores into the page, no system calls.
type RunningFile struct{ b []byte }

// runningPage is the running file's size; it names up to runningMost
// requests of a batch (a larger batch's first ones, and its whole count).
const (
	runningPage = 4096
	runningMost = runningPage/8 - 1
)

// RunningFilePath is the running file of the executor serving on socket.
func RunningFilePath(socket string) string { return socket + ".running" }

// CreateRunningFile creates the running file at path, naming nothing, and
// maps it.
func CreateRunningFile(path string) (*RunningFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create running file: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(runningPage); err != nil {
		return nil, fmt.Errorf("create running file: %w", err)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, runningPage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map running file: %w", err)
	}
	return &RunningFile{b: b}, nil
}

// set names the requests of the batch about to run (ids, one per row; nil
// receiver: no file). The ids go first and the count last, so that a
// crash between leaves the last batch's count, never a count past them.
func (r *RunningFile) set(ids []uint64) {
	if r == nil {
		return
	}
	binary.LittleEndian.PutUint64(r.b, 0)
	for i, id := range ids[:min(len(ids), runningMost)] {
		binary.LittleEndian.PutUint64(r.b[8+8*i:], id)
	}
	binary.LittleEndian.PutUint64(r.b, uint64(len(ids)))
}

// clear says that nothing runs.
func (r *RunningFile) clear() {
	if r != nil {
		binary.LittleEndian.PutUint64(r.b, 0)
	}
}

// Close unmaps the file and removes it at path.
func (r *RunningFile) Close(path string) error {
	if r == nil {
		return nil
	}
	err := syscall.Munmap(r.b)
	if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}

// readRunning reads the request ids a running file at path names, each
// once (none: the file is absent, short, or names none).
func readRunning(path string) []uint64 {
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 8 {
		return nil
	}
	n := min(binary.LittleEndian.Uint64(b), uint64(runningMost), uint64(len(b)/8-1))
	var ids []uint64
	seen := map[uint64]bool{}
	for i := range n {
		id := binary.LittleEndian.Uint64(b[8+8*i:])
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}
