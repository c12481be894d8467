package fsperm

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fakeSystem answers as the system would to gpuletd (uid 999) over files of
// root's, without needing either user here.
func fakeSystem() system {
	names := map[uint32]string{0: "root", 999: "gpuletd"}
	return system{
		writable:   func(string) error { return nil },
		readable:   func(string) error { return nil },
		readOnlyFS: func(string) bool { return false },
		owner:      func(string) (uint32, uint32, bool) { return 0, 0, true },
		self:       func() (int, int) { return 999, 999 },
		userName:   func(id uint32) string { return names[id] },
		groupName:  func(id uint32) string { return names[id] },
	}
}

// deny makes writes to which refused, and every other path missing.
func deny(which string) func(string) error {
	return func(p string) error {
		if p == which {
			return unix.EACCES
		}
		return unix.ENOENT
	}
}

func TestWhyNotWritable(t *testing.T) {
	tests := []struct {
		name   string
		change func(a *system)
		is     error
		says   string
	}{
		{"nothing to say", func(*system) {}, nil, ""},
		{"the file belongs to root", func(a *system) { a.writable = deny("/s/gpuletd.db") }, ErrPermission,
			"/s/gpuletd.db belongs to root:root and gpuletd runs as gpuletd (uid 999), which may not write it: chown -R gpuletd:gpuletd /s"},
		{"the folder belongs to root", func(a *system) { a.writable = deny("/s") }, ErrPermission,
			"/s belongs to root:root and gpuletd runs as gpuletd (uid 999), which may not write it: chown -R gpuletd:gpuletd /s"},
		{"the write-ahead log belongs to root", func(a *system) { a.writable = deny("/s/gpuletd.db-wal") }, ErrPermission,
			"/s/gpuletd.db-wal belongs to root:root"},
		{"its own file without write permission", func(a *system) {
			a.writable = deny("/s/gpuletd.db")
			a.owner = func(string) (uint32, uint32, bool) { return 999, 999, true }
		}, ErrPermission, "/s/gpuletd.db belongs to gpuletd:gpuletd and gpuletd runs as gpuletd (uid 999), which may not write it: chmod -R u+w /s"},
		{"an owner it cannot read", func(a *system) {
			a.writable = deny("/s/gpuletd.db")
			a.owner = func(string) (uint32, uint32, bool) { return 0, 0, false }
		}, ErrPermission, "gpuletd runs as gpuletd (uid 999), which may not write /s/gpuletd.db (permission denied): chown -R gpuletd:gpuletd /s"},
		{"a read-only file system", func(a *system) { a.readOnlyFS = func(string) bool { return true } }, ErrReadOnlyFS,
			"/s is on a file system mounted read-only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := fakeSystem()
			tt.change(&a)
			err := a.whyNotWritable("/s", "/s/gpuletd.db", "/s/gpuletd.db-wal", "/s/gpuletd.db-shm")
			if tt.is == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.is)
			require.Contains(t, err.Error(), tt.says)
		})
	}
}

func TestWhyNoMkdir(t *testing.T) {
	exists := func(paths ...string) func(string) (uint32, uint32, bool) {
		return func(p string) (uint32, uint32, bool) {
			for _, e := range paths {
				if p == e {
					return 0, 0, true
				}
			}
			return 0, 0, false
		}
	}
	tests := []struct {
		name   string
		change func(a *system)
		is     error
		says   string
	}{
		{"a parent it may write", func(a *system) { a.owner = exists("/var/lib") }, nil, ""},
		{"a parent of root's", func(a *system) {
			a.owner = exists("/var/lib")
			a.writable = deny("/var/lib")
		}, ErrPermission, "/var/lib belongs to root:root and gpuletd runs as gpuletd (uid 999), which may not make /var/lib/gpuletd/state in it: " +
			"make it for that user (mkdir -p /var/lib/gpuletd/state && chown gpuletd:gpuletd /var/lib/gpuletd/state)"},
		{"the nearest parent that exists", func(a *system) {
			a.owner = exists("/var")
			a.writable = deny("/var")
		}, ErrPermission, "/var belongs to root:root"},
		{"a read-only file system", func(a *system) {
			a.owner = exists("/var/lib")
			a.readOnlyFS = func(p string) bool { return p == "/var/lib" }
		}, ErrReadOnlyFS, "/var/lib is on a file system mounted read-only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := fakeSystem()
			tt.change(&a)
			err := a.whyNoMkdir("/var/lib/gpuletd/state")
			if tt.is == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.is)
			require.Contains(t, err.Error(), tt.says)
		})
	}
}

func TestWhyNotReadable(t *testing.T) {
	tests := []struct {
		name   string
		change func(a *system)
		says   string
	}{
		{"readable", func(*system) {}, ""},
		{"missing", func(a *system) { a.readable = deny("/other") }, ""},
		{"root's alone", func(a *system) { a.readable = deny("/etc/gpuletd/gpuletd.yaml") },
			"/etc/gpuletd/gpuletd.yaml belongs to root:root and gpuletd runs as gpuletd (uid 999), which may not read it: " +
				"chgrp gpuletd /etc/gpuletd/gpuletd.yaml && chmod g+r /etc/gpuletd/gpuletd.yaml"},
		{"behind a folder it may not enter", func(a *system) {
			a.readable = deny("/etc/gpuletd/gpuletd.yaml")
			a.owner = func(string) (uint32, uint32, bool) { return 0, 0, false }
		}, "gpuletd runs as gpuletd (uid 999), which may not reach /etc/gpuletd/gpuletd.yaml: let it read the folders above it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := fakeSystem()
			tt.change(&a)
			err := a.whyNotReadable("/etc/gpuletd/gpuletd.yaml")
			if tt.says == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrNotReadable)
			require.EqualError(t, err, "not readable by this user: "+tt.says)
		})
	}
}

// TestWhyNotWritableBy: what another user may write, told from owners and
// modes, on real files.
func TestWhyNotWritableBy(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "gpuletd.db")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	me, err := user.Current()
	require.NoError(t, err)
	nobody := &user.User{Uid: "65534", Gid: "65534", Username: "nobody"}

	require.NoError(t, WhyNotWritableBy(me, dir, file), "the owner may write its own files")
	err = WhyNotWritableBy(nobody, dir, file, file+"-wal")
	require.ErrorIs(t, err, ErrPermission)
	require.Contains(t, err.Error(), file+" belongs to "+me.Username)
	require.Contains(t, err.Error(), "runs as nobody (uid 65534), which may not write it: chown -R nobody:")

	require.NoError(t, os.Chmod(file, 0o666))
	require.NoError(t, os.Chmod(dir, 0o777))
	require.NoError(t, WhyNotWritableBy(nobody, dir, file), "writable by all")
	require.NoError(t, os.Chmod(dir, 0o755))
	err = WhyNotWritableBy(nobody, dir, file)
	require.ErrorIs(t, err, ErrPermission, "the folder too")
	require.Contains(t, err.Error(), dir+" belongs to "+me.Username)

	require.Error(t, WhyNotWritableBy(&user.User{Uid: "x", Gid: "1", Username: "odd"}, dir))
}

// TestWritableByCountsEveryGroup: a file its group may write is writable by
// a user for whom that group is a supplementary one, as the kernel has it;
// the owner's bits alone apply to the owner, even when its group's allow.
func TestWritableByCountsEveryGroup(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gpuletd.db")
	require.NoError(t, os.WriteFile(file, nil, 0o660))
	require.NoError(t, os.Chmod(file, 0o660))
	fi, err := os.Stat(file)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	stranger := st.Uid + 1000
	require.NoError(t, writableBy(file, stranger, []uint32{st.Gid + 1, st.Gid}), "a supplementary group the file has")
	require.ErrorIs(t, writableBy(file, stranger, []uint32{st.Gid + 1}), unix.EACCES, "in none of its groups: the others' bits")
	require.NoError(t, os.Chmod(file, 0o060))
	require.ErrorIs(t, writableBy(file, st.Uid, []uint32{st.Gid}), unix.EACCES, "the owner gets the owner's bits")
	require.ErrorIs(t, writableBy(filepath.Join(t.TempDir(), "gone"), stranger, nil), unix.ENOENT)
}

func TestOwner(t *testing.T) {
	me, err := user.Current()
	require.NoError(t, err)
	uid, name, ok := Owner(t.TempDir())
	require.True(t, ok)
	require.Equal(t, me.Uid, strconv.FormatUint(uint64(uid), 10))
	require.Equal(t, me.Username, name)
	_, _, ok = Owner(filepath.Join(t.TempDir(), "missing"))
	require.False(t, ok)
}
