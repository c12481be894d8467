package store

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// access is what explain asks of the operating system, apart so that tests
// can give the answers only another user would get.
type access struct {
	writable   func(path string) error                      // nil when this process may write path (access(2), W_OK)
	readOnlyFS func(path string) bool                       // the file system holding path is mounted read-only
	owner      func(path string) (uid, gid uint32, ok bool) // path's owner; ok false when it cannot be read
	self       func() (uid, gid int)
	userName   func(uid uint32) string
	groupName  func(gid uint32) string
}

// osAccess answers from the operating system.
var osAccess = access{
	writable: func(path string) error { return unix.Access(path, unix.W_OK) },
	readOnlyFS: func(path string) bool {
		var fs unix.Statfs_t
		return unix.Statfs(path, &fs) == nil && fs.Flags&unix.ST_RDONLY != 0
	},
	owner: func(path string) (uint32, uint32, bool) {
		fi, err := os.Stat(path)
		if err != nil {
			return 0, 0, false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return 0, 0, false
		}
		return st.Uid, st.Gid, true
	},
	self: func() (int, int) { return os.Geteuid(), os.Getegid() },
	userName: func(uid uint32) string {
		id := strconv.FormatUint(uint64(uid), 10)
		if u, err := user.LookupId(id); err == nil {
			return u.Username
		}
		return id
	},
	groupName: func(gid uint32) string {
		id := strconv.FormatUint(uint64(gid), 10)
		if g, err := user.LookupGroupId(id); err == nil {
			return g.Name
		}
		return id
	},
}

// explain adds to an ErrReadOnly error why SQLite found the database
// read-only, where the operating system says: SQLite opens a file it may
// not write read-only and only says "attempt to write a readonly database"
// at the first write, which leaves an operator to guess. Other errors are
// returned as they are.
func (s *Store) explain(err error) error {
	if !errors.Is(err, ErrReadOnly) || errors.Is(err, ErrPermission) || errors.Is(err, ErrReadOnlyFS) {
		return err
	}
	if why := osAccess.readOnlyCause(s.path); why != nil {
		return fmt.Errorf("%w: %w", err, why)
	}
	return err
}

// readOnlyCause looks at the database file at path, its write-ahead log,
// its shared-memory index and its folder (SQLite writes all four) for one
// this process may not write, and says whose it is and what to run; or at a
// file system mounted read-only. Nil when neither is the case.
func (a access) readOnlyCause(path string) error {
	dir := filepath.Dir(path)
	if a.readOnlyFS(dir) {
		return fmt.Errorf("%w: %s is on a file system mounted read-only", ErrReadOnlyFS, dir)
	}
	uid, gid := a.self()
	me := a.userName(uint32(uid))
	for _, p := range []string{path, path + "-wal", path + "-shm", dir} {
		err := a.writable(p)
		if err == nil || errors.Is(err, unix.ENOENT) {
			continue
		}
		fix := fmt.Sprintf("chown -R %s:%s %s", me, a.groupName(uint32(gid)), dir)
		ouid, ogid, ok := a.owner(p)
		if !ok {
			return fmt.Errorf("%w: gpuletd runs as %s (uid %d), which may not write %s (%v): %s", ErrPermission, me, uid, p, err, fix)
		}
		if int(ouid) == uid {
			fix = "chmod -R u+w " + dir
		}
		return fmt.Errorf("%w: %s belongs to %s:%s and gpuletd runs as %s (uid %d), which may not write it: %s",
			ErrPermission, p, a.userName(ouid), a.groupName(ogid), me, uid, fix)
	}
	return nil
}
