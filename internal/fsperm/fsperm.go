// Package fsperm says why a folder or file cannot be written, made or read
// by this process, in the words an operator acts on: whose it is, which user
// gpuletd runs as, and the command that mends it. SQLite and the kernel say
// only "permission denied" or "attempt to write a readonly database",
// which, for a daemon usually started by systemd as its own user over
// folders someone may have used as root before, leaves an operator to
// guess.
package fsperm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

var (
	// ErrPermission is in an explanation of files or folders the user the
	// process runs as may not write.
	ErrPermission = errors.New("not writable by this user")
	// ErrNotReadable is in an explanation of a file the user the process
	// runs as may not read.
	ErrNotReadable = errors.New("not readable by this user")
	// ErrReadOnlyFS is in an explanation of a file system mounted
	// read-only.
	ErrReadOnlyFS = errors.New("read-only file system")
)

// system is what the package asks of the operating system, apart so that
// tests can give the answers only another user would get.
type system struct {
	writable   func(path string) error                      // nil when this process may write path (access(2), W_OK)
	readable   func(path string) error                      // nil when this process may read path (access(2), R_OK)
	readOnlyFS func(path string) bool                       // the file system holding path is mounted read-only
	owner      func(path string) (uid, gid uint32, ok bool) // path's owner; ok false when it cannot be read
	self       func() (uid, gid int)
	userName   func(uid uint32) string
	groupName  func(gid uint32) string
}

// osSystem answers from the operating system.
var osSystem = system{
	writable: func(path string) error { return unix.Access(path, unix.W_OK) },
	readable: func(path string) error { return unix.Access(path, unix.R_OK) },
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

// Owner is path's owner: its uid and user name (the uid again when no
// user has it); ok false when path cannot be read.
func Owner(path string) (uid uint32, name string, ok bool) {
	uid, _, ok = osSystem.owner(path)
	if !ok {
		return 0, "", false
	}
	return uid, osSystem.userName(uid), true
}

// WhyNotWritable looks at the folder dir and the files in it (full paths)
// for one this process may not write, and says whose it is and what to
// run (ErrPermission); or at dir's file system mounted read-only
// (ErrReadOnlyFS). Files that do not exist are passed over. Nil when
// neither is the case.
func WhyNotWritable(dir string, files ...string) error {
	return osSystem.whyNotWritable(dir, files...)
}

// WhyNoMkdir says why the folder dir could not be made, when its nearest
// existing parent is one this process may not write (ErrPermission: whose
// it is, and how to make the folder for this user) or is on a file system
// mounted read-only (ErrReadOnlyFS). Nil otherwise.
func WhyNoMkdir(dir string) error {
	return osSystem.whyNoMkdir(dir)
}

// WhyNotReadable says whose the file at path is and how to let this
// process read it, when this process may not (ErrNotReadable). Nil when it
// may, or when the file does not exist.
func WhyNotReadable(path string) error {
	return osSystem.whyNotReadable(path)
}

// ExplainRead adds to err, when it is a permission denied from reading one
// of paths, why that file cannot be read (WhyNotReadable). Other errors
// are returned as they are.
func ExplainRead(err error, paths ...string) error {
	if !errors.Is(err, fs.ErrPermission) {
		return err
	}
	for _, p := range paths {
		if why := WhyNotReadable(p); why != nil {
			return fmt.Errorf("%w: %w", err, why)
		}
	}
	return err
}

// WhyNotWritableBy looks, as WhyNotWritable does, at the folder dir and
// the files in it, but for the user u rather than this process, from their
// owners and modes, u's primary and supplementary groups counted (ACLs are
// not): for a check, run as root, of what the service's own user will meet.
func WhyNotWritableBy(u *user.User, dir string, files ...string) error {
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return fmt.Errorf("user %s: uid %q: %w", u.Username, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return fmt.Errorf("user %s: gid %q: %w", u.Username, u.Gid, err)
	}
	gids := []uint32{uint32(gid)}
	if ids, err := u.GroupIds(); err == nil { // a user the system does not know has its primary group alone
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil {
				gids = append(gids, uint32(g))
			}
		}
	}
	a := osSystem
	a.self = func() (int, int) { return int(uid), int(gid) }
	a.writable = func(path string) error { return writableBy(path, uint32(uid), gids) }
	return a.whyNotWritable(dir, files...)
}

// writableBy tells from path's owner and mode, or its access ACL where it
// has one, whether the user uid, in the groups gids, may write it:
// unix.EACCES when not, unix.ENOENT when it is missing. As the kernel does,
// the owner's bits apply to the owner, the group's to a member of the
// file's group, the others' to the rest.
func writableBy(path string, uid uint32, gids []uint32) error {
	fi, err := os.Stat(path)
	if err != nil {
		return unix.ENOENT
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if acl, err := readACL(path); err == nil {
		if !aclWritable(acl, st.Uid, st.Gid, uid, gids) {
			return unix.EACCES
		}
		return nil
	}
	bit := fs.FileMode(0o002) // others'
	switch {
	case st.Uid == uid:
		bit = 0o200
	case slices.Contains(gids, st.Gid):
		bit = 0o020
	}
	if fi.Mode().Perm()&bit == 0 {
		return unix.EACCES
	}
	return nil
}

func (a system) whyNotReadable(path string) error {
	if err := a.readable(path); err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	uid, gid := a.self()
	me, group := a.userName(uint32(uid)), a.groupName(uint32(gid))
	ouid, ogid, ok := a.owner(path)
	if !ok {
		return fmt.Errorf("%w: gpuletd runs as %s (uid %d), which may not reach %s: let it read the folders above it",
			ErrNotReadable, me, uid, path)
	}
	return fmt.Errorf("%w: %s belongs to %s:%s and gpuletd runs as %s (uid %d), which may not read it: chgrp %s %s && chmod g+r %s",
		ErrNotReadable, path, a.userName(ouid), a.groupName(ogid), me, uid, group, path, path)
}

func (a system) whyNotWritable(dir string, files ...string) error {
	if a.readOnlyFS(dir) {
		return fmt.Errorf("%w: %s is on a file system mounted read-only", ErrReadOnlyFS, dir)
	}
	uid, gid := a.self()
	me := a.userName(uint32(uid))
	for _, p := range append(slices.Clone(files), dir) {
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

func (a system) whyNoMkdir(dir string) error {
	parent := filepath.Dir(dir)
	for parent != filepath.Dir(parent) {
		if _, _, ok := a.owner(parent); ok {
			break
		}
		parent = filepath.Dir(parent)
	}
	if a.readOnlyFS(parent) {
		return fmt.Errorf("%w: %s is on a file system mounted read-only", ErrReadOnlyFS, parent)
	}
	if a.writable(parent) == nil {
		return nil
	}
	uid, gid := a.self()
	me, group := a.userName(uint32(uid)), a.groupName(uint32(gid))
	ouid, ogid, _ := a.owner(parent)
	return fmt.Errorf("%w: %s belongs to %s:%s and gpuletd runs as %s (uid %d), which may not make %s in it: make it for that user (mkdir -p %s && chown %s:%s %s)",
		ErrPermission, parent, a.userName(ouid), a.groupName(ogid), me, uid, dir, dir, me, group, dir)
}
