package store

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// walWriteLockByte is the byte of the shared-memory index (the -shm file)
// that a connection holds locked for writing while its write transaction
// is open, in WAL mode: SQLite's WAL locks start at offset 120 of that file
// and the write lock is the first of them (SQLite's file format
// documentation, "WAL-mode File Locking").
const walWriteLockByte = 120

// WriteLockHolders names the processes other than this one that hold the
// database at path locked for writing, as the kernel lists the file locks
// in /proc/locks: "pid 4242 (sqlite3)", several joined by commas. It is ""
// where it finds none (a system without /proc/locks, a lock already gone,
// or one taken on another host over a network file system).
func WriteLockHolders(path string) string {
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		return ""
	}
	db, shm := inode(path), inode(path+"-shm")
	pids := lockPIDs(locks, db, shm, os.Getpid())
	words := make([]string, 0, len(pids))
	for _, pid := range pids {
		w := "pid " + strconv.Itoa(pid)
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
			w += " (" + strings.TrimSpace(string(comm)) + ")"
		}
		words = append(words, w)
	}
	return strings.Join(words, ", ")
}

// inode is the inode number of the file at path, 0 when it cannot be read.
func inode(path string) uint64 {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return 0
	}
	return st.Ino
}

// lockPIDs reads /proc/locks (locks) for the processes other than self that
// hold a write lock on the database file (inode db: SQLite's locks in
// rollback mode, or a connection in exclusive locking mode) or on the
// write-lock byte of its shared-memory index (inode shm), in order of first
// appearance. Files are matched by inode number alone: on an overlay file
// system the kernel lists a lock under the device of the layer below, not
// the one stat gives. Lines of processes waiting for a lock ("->") and
// open file description locks (no owning pid) are passed over.
func lockPIDs(locks []byte, db, shm uint64, self int) []int {
	var pids []int
	seen := map[int]bool{}
	sc := bufio.NewScanner(bytes.NewReader(locks))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// "1:" POSIX ADVISORY WRITE pid maj:min:inode start end; a
		// waiter's line has "->" after the number, nine fields.
		if len(f) != 8 || f[3] != "WRITE" {
			continue
		}
		pid, err := strconv.Atoi(f[4])
		if err != nil || pid <= 0 || pid == self || seen[pid] {
			continue
		}
		id := f[5][strings.LastIndexByte(f[5], ':')+1:]
		ino, err := strconv.ParseUint(id, 10, 64)
		if err != nil || ino == 0 {
			continue
		}
		switch ino {
		case db:
		case shm:
			if !covers(f[6], f[7], walWriteLockByte) {
				continue
			}
		default:
			continue
		}
		seen[pid] = true
		pids = append(pids, pid)
	}
	return pids
}

// covers says whether the lock range start..end of /proc/locks ("EOF" for
// a lock to the end of the file) holds byte b.
func covers(start, end string, b uint64) bool {
	s, err := strconv.ParseUint(start, 10, 64)
	if err != nil || s > b {
		return false
	}
	if end == "EOF" {
		return true
	}
	e, err := strconv.ParseUint(end, 10, 64)
	return err == nil && e >= b
}
