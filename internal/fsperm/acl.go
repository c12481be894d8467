package fsperm

import (
	"encoding/binary"
	"errors"
	"slices"

	"golang.org/x/sys/unix"
)

// A folder may let a user write it through a POSIX access ACL (setfacl -m
// u:gpuletd:rwx) that its mode bits do not show: the group bits of such a
// file are the ACL's mask, not its owning group's permissions. writableBy
// reads the ACL where there is one and decides as the kernel does (acl(5)).

// aclXattr is the extended attribute that holds a file's access ACL.
const aclXattr = "system.posix_acl_access"

// The ACL's binary form (Linux's posix_acl_xattr): a 4-byte version, 2,
// then 8-byte entries of tag, permissions and id, little-endian.
const (
	aclVersion   = 2
	aclEntrySize = 8

	aclUserObj  = 0x01
	aclUser     = 0x02
	aclGroupObj = 0x04
	aclGroup    = 0x08
	aclMask     = 0x10
	aclOther    = 0x20

	aclWrite = 0x2
)

// aclEntry is one entry of an access ACL.
type aclEntry struct {
	tag, perm uint16
	id        uint32
}

// errNoACL says a file has no access ACL (or none this reads).
var errNoACL = errors.New("no access ACL")

// readACL reads path's access ACL; errNoACL when it has none.
func readACL(path string) ([]aclEntry, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Getxattr(path, aclXattr, buf)
		switch {
		case errors.Is(err, unix.ERANGE):
			buf = make([]byte, 2*len(buf))
			continue
		case err != nil:
			return nil, errNoACL // none (ENODATA), or a file system without them
		}
		return parseACL(buf[:n])
	}
}

// parseACL decodes an access ACL's binary form.
func parseACL(b []byte) ([]aclEntry, error) {
	if len(b) < 4 || binary.LittleEndian.Uint32(b) != aclVersion || (len(b)-4)%aclEntrySize != 0 {
		return nil, errNoACL
	}
	var out []aclEntry
	for p := b[4:]; len(p) > 0; p = p[aclEntrySize:] {
		out = append(out, aclEntry{tag: binary.LittleEndian.Uint16(p), perm: binary.LittleEndian.Uint16(p[2:]), id: binary.LittleEndian.Uint32(p[4:])})
	}
	return out, nil
}

// aclWritable decides from an access ACL whether user uid, in groups gids,
// may write a file owned by owner:group, as acl(5)'s access check does: the
// owner's entry for the owner, a named user's entry (under the mask) for
// that user, any matching group entry (under the mask) for a member of
// those groups, the others' entry for the rest.
func aclWritable(acl []aclEntry, owner, group, uid uint32, gids []uint32) bool {
	mask := uint16(0x7)
	for _, e := range acl {
		if e.tag == aclMask {
			mask = e.perm
		}
	}
	// writes says whether the first entry match accepts grants write,
	// under mask; found whether there is one.
	writes := func(mask uint16, match func(aclEntry) bool) (ok, found bool) {
		if i := slices.IndexFunc(acl, match); i >= 0 {
			return acl[i].perm&mask&aclWrite != 0, true
		}
		return false, false
	}
	if uid == owner {
		ok, _ := writes(0x7, func(e aclEntry) bool { return e.tag == aclUserObj })
		return ok
	}
	if ok, found := writes(mask, func(e aclEntry) bool { return e.tag == aclUser && e.id == uid }); found {
		return ok
	}
	matched := false
	for _, e := range acl {
		member := e.tag == aclGroupObj && slices.Contains(gids, group) || e.tag == aclGroup && slices.Contains(gids, e.id)
		if !member {
			continue
		}
		matched = true
		if e.perm&mask&aclWrite != 0 {
			return true
		}
	}
	if matched {
		return false
	}
	ok, _ := writes(0x7, func(e aclEntry) bool { return e.tag == aclOther })
	return ok
}
