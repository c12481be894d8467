package cgroupfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Find takes the controller's own v1 hierarchy, not another's, and a v2
// group only where it holds the controller's file; Up walks to the mount's
// root and no further.
func TestFindAndUp(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("cgroup", "5:cpuset:/elsewhere\n4:cpu,cpuacct:/a/b\n0::/x/y\n")
	write("mountinfo", "30 1 0:1 / "+dir+"/cpuset rw - cgroup cgroup rw,cpuset\n31 1 0:2 / "+dir+"/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"+
		"32 1 0:3 / "+dir+"/unified rw - cgroup2 cgroup2 rw\n")
	g, err := Find(filepath.Join(dir, "cgroup"), filepath.Join(dir, "mountinfo"), "cpu", "cpu.max")
	require.NoError(t, err)
	require.Equal(t, Group{Name: "/a/b", Dir: filepath.Join(dir, "cpu,cpuacct/a/b"), Root: filepath.Join(dir, "cpu,cpuacct")}, g)
	var names []string
	g.Up(func(name, _ string) bool { names = append(names, name); return true })
	require.Equal(t, []string{"/a/b", "/a", "/"}, names)
	names = nil
	g.Up(func(name, _ string) bool { names = append(names, name); return false })
	require.Equal(t, []string{"/a/b"}, names, "stops when told")

	_, err = Find(filepath.Join(dir, "cgroup"), filepath.Join(dir, "mountinfo"), "memory", "memory.events")
	require.ErrorIs(t, err, ErrNone, "v2's group has no memory.events, and no v1 memory hierarchy is mounted")
	write("unified/x/y/memory.events", "oom 0\n")
	g, err = Find(filepath.Join(dir, "cgroup"), filepath.Join(dir, "mountinfo"), "memory", "memory.events")
	require.NoError(t, err)
	require.True(t, g.V2)
	require.Equal(t, "/x/y", g.Name)
}
