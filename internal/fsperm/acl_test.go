package fsperm

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// aclBytes is an access ACL in its binary form.
func aclBytes(entries ...aclEntry) []byte {
	b := binary.LittleEndian.AppendUint32(nil, aclVersion)
	for _, e := range entries {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, e.id)
	}
	return b
}

// TestACLWritable decides as acl(5) does: the owner by its entry, a named
// user by its entry under the mask, a member of any matching group by
// those entries under the mask (none matching write: denied, not the
// others' entry), the rest by the others' entry.
func TestACLWritable(t *testing.T) {
	const owner, group, svc, svcGroup, other = 1000, 1000, 990, 990, 5000
	base := []aclEntry{{tag: aclUserObj, perm: 7}, {tag: aclGroupObj, perm: 5}, {tag: aclOther, perm: 5}}
	with := func(es ...aclEntry) []aclEntry { return append(append([]aclEntry{}, base...), es...) }
	for _, tc := range []struct {
		name string
		acl  []aclEntry
		uid  uint32
		gids []uint32
		want bool
	}{
		{"the owner by its entry", base, owner, []uint32{group}, true},
		{"a named user", with(aclEntry{tag: aclUser, perm: 7, id: svc}, aclEntry{tag: aclMask, perm: 7}), svc, []uint32{svcGroup}, true},
		{"a named user under a mask without write", with(aclEntry{tag: aclUser, perm: 7, id: svc}, aclEntry{tag: aclMask, perm: 5}), svc, []uint32{svcGroup}, false},
		{"a named group", with(aclEntry{tag: aclGroup, perm: 7, id: svcGroup}, aclEntry{tag: aclMask, perm: 7}), svc, []uint32{svcGroup}, true},
		{"the owning group without write", base, svc, []uint32{group}, false},
		{"a group that matches and denies wins over others'", []aclEntry{{tag: aclUserObj, perm: 7}, {tag: aclGroupObj, perm: 5}, {tag: aclOther, perm: 7}}, svc, []uint32{group}, false},
		{"anyone else by the others' entry", base, other, []uint32{other}, false},
		{"others may write", []aclEntry{{tag: aclUserObj, perm: 7}, {tag: aclGroupObj, perm: 5}, {tag: aclOther, perm: 7}}, other, []uint32{other}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acl, err := parseACL(aclBytes(tc.acl...))
			require.NoError(t, err)
			require.Equal(t, tc.want, aclWritable(acl, owner, group, tc.uid, tc.gids))
		})
	}
	for _, bad := range [][]byte{nil, {1, 0, 0, 0}, append(aclBytes(base...), 1)} {
		_, err := parseACL(bad)
		require.ErrorIs(t, err, errNoACL, "%v", bad)
	}
}

// TestWritableByReadsTheACL: a folder of mode 0700 whose ACL lets another
// user write it is writable by that user, and not once the ACL's mask
// takes write away; each time the kernel, asked as that user, agrees. It
// sets the ACL and switches user itself, so it needs root and a file system
// with ACLs; it skips without them.
func TestWritableByReadsTheACL(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{base, filepath.Dir(base)} {
		require.NoError(t, os.Chmod(d, 0o755)) // the stranger may reach the folder
	}
	dir := filepath.Join(base, "state")
	require.NoError(t, os.Mkdir(dir, 0o700))
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(dir, &st))
	const stranger = 54321
	require.ErrorIs(t, writableBy(dir, stranger, []uint32{stranger}), unix.EACCES, "mode 0700: the owner's alone")

	set := func(mask uint16) error {
		return unix.Setxattr(dir, aclXattr, aclBytes(aclEntry{tag: aclUserObj, perm: 7}, aclEntry{tag: aclUser, perm: 7, id: stranger},
			aclEntry{tag: aclGroupObj, perm: 0}, aclEntry{tag: aclMask, perm: mask}, aclEntry{tag: aclOther, perm: 0}), 0)
	}
	if err := set(7); err != nil {
		t.Skipf("cannot set an ACL here (root and a file system with ACLs are needed): %v", err)
	}
	require.NoError(t, writableBy(dir, stranger, []uint32{stranger}), "setfacl -m u:%d:rwx", stranger)
	require.True(t, kernelLetsWrite(t, dir, stranger))
	require.NoError(t, set(5))
	require.ErrorIs(t, writableBy(dir, stranger, []uint32{stranger}), unix.EACCES, "the mask r-x takes write away")
	require.False(t, kernelLetsWrite(t, dir, stranger))
	require.NoError(t, writableBy(dir, st.Uid, []uint32{st.Gid}), "the owner keeps its own")
}

// kernelLetsWrite asks the kernel whether uid (in its own group alone) may
// write path: test -w run as that user.
func kernelLetsWrite(t *testing.T, path string, uid uint32) bool {
	t.Helper()
	cmd := exec.Command("test", "-w", path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Skipf("cannot run a command as uid %d here: %v", uid, err)
	}
	return err == nil
}
