// Package cgroupfs finds the cgroup a process runs in for one controller:
// its path in the hierarchy (/proc/PID/cgroup) and that hierarchy's folder
// as mounted on this machine (/proc/PID/mountinfo), cgroup v1's or v2's,
// inside a container or not. What the controller's files hold is the
// caller's business (memcg reads memory, cpucg the CPU bandwidth).
package cgroupfs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNone is returned when a process has no cgroup of the controller this
// package can read: no cgroup file system mounted, or not the controller.
var ErrNone = errors.New("no cgroup of the controller")

// Group is one cgroup, as mounted on this machine.
type Group struct {
	// Name is its path in the hierarchy, as /proc/PID/cgroup gives it
	// ("/system.slice/gpuletd.service").
	Name string
	// Dir is its directory in the mounted file system.
	Dir string
	// V2 says it is a cgroup v2 group; else the controller's v1 hierarchy's.
	V2 bool
	// Root is the hierarchy's mount point: walking up stops there.
	Root string
}

// Find finds the cgroup of controller ("memory", "cpu") named in
// cgroupFile (a /proc/PID/cgroup) among the mounts listed in mountinfoFile
// (a /proc/PID/mountinfo). The controller's v1 hierarchy wins where both
// are mounted (a hybrid host keeps its controllers there); a v2 group counts
// only when it holds v2File, a file of the controller ("memory.events"),
// so that a v2 hierarchy without the controller enabled is not taken.
func Find(cgroupFile, mountinfoFile, controller, v2File string) (Group, error) {
	cg, err := os.ReadFile(cgroupFile)
	if err != nil {
		return Group{}, fmt.Errorf("read cgroup: %w", err)
	}
	mi, err := os.ReadFile(mountinfoFile)
	if err != nil {
		return Group{}, fmt.Errorf("read mountinfo: %w", err)
	}
	v1Path, v2Path, has1, has2 := cgroupPaths(cg, controller)
	ms := cgroupMounts(mi)
	if has1 {
		if m, ok := ms.v1(controller); ok {
			return Group{Name: v1Path, Dir: m.dirOf(v1Path), Root: m.point}, nil
		}
	}
	if has2 {
		if m, ok := ms.v2(); ok {
			g := Group{Name: v2Path, Dir: m.dirOf(v2Path), V2: true, Root: m.point}
			if _, err := os.Stat(filepath.Join(g.Dir, v2File)); err == nil {
				return g, nil
			}
		}
	}
	return Group{}, ErrNone
}

// Up calls f with the group and each group above it, nearest first, up to
// the hierarchy's mounted root, until f returns false.
func (g Group) Up(f func(name, dir string) bool) {
	d, n := g.Dir, g.Name
	for f(n, d) {
		if d == g.Root || !strings.HasPrefix(d, g.Root) || n == "/" || n == "" {
			return
		}
		d, n = filepath.Dir(d), path.Dir(n)
	}
}

// cgroupPaths reads a /proc/PID/cgroup: the process's path in the v1
// hierarchy of controller and in the v2 one, each with whether it was there.
func cgroupPaths(b []byte, controller string) (v1, v2 string, has1, has2 bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// hierarchy-ID:controller-list:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2, has2 = parts[2], true
		case hasWord(parts[1], controller):
			v1, has1 = parts[2], true
		}
	}
	return v1, v2, has1, has2
}

// mount is one mounted cgroup hierarchy.
type mount struct {
	root  string // the hierarchy's path mounted there ("/" unless a container's)
	point string // where it is mounted
	v2    bool
	opts  string // its super options, the v1 controllers among them
}

// dirOf is the directory of the cgroup at path in the hierarchy.
func (m mount) dirOf(path string) string {
	if m.root != "/" {
		if rest, ok := strings.CutPrefix(path, m.root); ok {
			path = rest
		}
	}
	return filepath.Join(m.point, path)
}

type mounts []mount

func (ms mounts) v1(controller string) (mount, bool) {
	for _, m := range ms {
		if !m.v2 && hasWord(m.opts, controller) {
			return m, true
		}
	}
	return mount{}, false
}

func (ms mounts) v2() (mount, bool) {
	for _, m := range ms {
		if m.v2 {
			return m, true
		}
	}
	return mount{}, false
}

// cgroupMounts reads the cgroup file systems of a /proc/PID/mountinfo.
func cgroupMounts(b []byte) mounts {
	var out mounts
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// ID parent major:minor root mount-point options [optional...] - fstype source super-options
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 || (g[0] != "cgroup" && g[0] != "cgroup2") {
			continue
		}
		out = append(out, mount{root: unescape(f[3]), point: unescape(f[4]), v2: g[0] == "cgroup2", opts: g[2]})
	}
	return out
}

// unescape undoes mountinfo's octal escapes of spaces and the like.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hasWord says whether the comma-separated list holds w.
func hasWord(list, w string) bool {
	for f := range strings.SplitSeq(list, ",") {
		if f == w {
			return true
		}
	}
	return false
}
