package memcg

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulet/gpuletd/internal/cgroupfs"
	"github.com/stretchr/testify/require"
)

// files writes each name → content under dir, making folders as needed.
func files(t *testing.T, dir string, m map[string]string) {
	t.Helper()
	for name, content := range m {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cgroup    string
		mounts    string // mountinfo lines, with @ for the test's folder
		tree      map[string]string
		wantName  string
		wantDir   string // under the test's folder
		wantV2    bool
		wantError error
	}{
		{name: "a hybrid host keeps memory in v1",
			cgroup: "4:memory:/process_api/ab\n0::/\n1:cpu:/\n",
			mounts: "31 23 0:28 / @ rw - tmpfs tmpfs rw\n35 31 0:32 / @/memory rw,relatime - cgroup cgroup rw,memory\n" +
				"32 31 0:29 / @/cpu rw - cgroup cgroup rw,cpu\n41 31 0:38 / @/unified rw - cgroup2 cgroup2 rw\n",
			tree:     map[string]string{"memory/process_api/ab/memory.oom_control": "oom_kill 0\n"},
			wantName: "/process_api/ab", wantDir: "memory/process_api/ab"},
		{name: "v1 with its controllers joined",
			cgroup:   "6:cpu,memory:/user.slice\n",
			mounts:   "35 31 0:32 / @/cpu,memory rw - cgroup cgroup rw,cpu,memory\n",
			wantName: "/user.slice", wantDir: "cpu,memory/user.slice"},
		{name: "a unified host",
			cgroup:   "0::/system.slice/gpuletd.service\n",
			mounts:   "25 22 0:22 / @ rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
			tree:     map[string]string{"system.slice/gpuletd.service/memory.events": "oom 0\noom_kill 0\n"},
			wantName: "/system.slice/gpuletd.service", wantDir: "system.slice/gpuletd.service", wantV2: true},
		{name: "a container sees its own group as the mount's root",
			cgroup:   "0::/\n",
			mounts:   "25 22 0:22 / @ ro - cgroup2 cgroup rw\n",
			tree:     map[string]string{"memory.events": "oom 0\noom_kill 0\n"},
			wantName: "/", wantDir: "", wantV2: true},
		{name: "a container without a cgroup namespace",
			cgroup:   "9:memory:/docker/ab\n",
			mounts:   "35 31 0:32 /docker/ab @/memory ro - cgroup cgroup rw,memory\n",
			wantName: "/docker/ab", wantDir: "memory"},
		{name: "a mount point with a space",
			cgroup:   "0::/a\n",
			mounts:   "25 22 0:22 / @/my\\040cgroups rw - cgroup2 cgroup2 rw\n",
			tree:     map[string]string{"my cgroups/a/memory.events": "oom_kill 2\n"},
			wantName: "/a", wantDir: "my cgroups/a", wantV2: true},
		{name: "v2 without the memory controller",
			cgroup:    "0::/a\n",
			mounts:    "25 22 0:22 / @ rw - cgroup2 cgroup2 rw\n",
			tree:      map[string]string{"a/cgroup.procs": ""},
			wantError: ErrNone},
		{name: "no cgroup file system",
			cgroup:    "0::/\n",
			mounts:    "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n",
			wantError: ErrNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files(t, dir, tc.tree)
			cg, mi := filepath.Join(dir, "cgroup"), filepath.Join(dir, "mountinfo")
			files(t, dir, map[string]string{"cgroup": tc.cgroup, "mountinfo": strings.ReplaceAll(tc.mounts, "@", dir)})
			g, err := Of(cg, mi)
			if tc.wantError != nil {
				require.ErrorIs(t, err, tc.wantError)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantName, g.Name)
			require.Equal(t, filepath.Join(dir, tc.wantDir), g.Dir)
			require.Equal(t, tc.wantV2, g.V2)
		})
	}
}

func TestOfUnreadable(t *testing.T) {
	_, err := Of(filepath.Join(t.TempDir(), "none"), "/proc/self/mountinfo")
	require.ErrorContains(t, err, "read cgroup")
	require.False(t, errors.Is(err, ErrNone))
}

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		v2   bool
		tree map[string]string
		want Counts
	}{
		{name: "v2, the limit set on the slice above",
			v2: true,
			tree: map[string]string{
				"system.slice/memory.max":                      "4294967296\n",
				"system.slice/memory.events":                   "low 0\nhigh 0\nmax 40\noom 7\noom_kill 9\n",
				"system.slice/memory.peak":                     "4294967296\n",
				"system.slice/gpuletd.service/memory.max":      "max\n",
				"system.slice/gpuletd.service/memory.events":   "low 0\nhigh 0\nmax 12\noom 2\noom_kill 3\noom_group_kill 0\n",
				"system.slice/gpuletd.service/memory.current":  "10000\n",
				"system.slice/gpuletd.service/memory.stat":     "anon 6000\nfile 4000\nactive_file 1000\ninactive_file 3000\n",
				"system.slice/gpuletd.service/cgroup.procs":    "1\n",
				"system.slice/gpuletd.service/memory.swap.max": "max\n",
			},
			want: Counts{Usage: 10000, WorkingSet: 7000, Kills: 3, Limit: 4 << 30, LimitOf: "/system.slice", LimitHits: 7, Peak: 4 << 30}},
		{name: "v2, the tighter of two limits",
			v2: true,
			tree: map[string]string{
				"system.slice/memory.max":                    "4294967296\n",
				"system.slice/gpuletd.service/memory.max":    "1073741824\n",
				"system.slice/gpuletd.service/memory.events": "oom 0\noom_kill 0\n",
			},
			want: Counts{Usage: -1, WorkingSet: -1, Kills: 0, Limit: 1 << 30, LimitOf: "/system.slice/gpuletd.service", LimitHits: 0, Peak: -1}},
		{name: "v2 with no limit",
			v2: true,
			tree: map[string]string{
				"system.slice/memory.max":                    "max\n",
				"system.slice/gpuletd.service/memory.max":    "max\n",
				"system.slice/gpuletd.service/memory.events": "oom 0\noom_kill 1\n",
			},
			want: Counts{Usage: -1, WorkingSet: -1, Kills: 1, LimitHits: -1, Peak: -1}},
		{name: "v1, unlimited but for the parent",
			tree: map[string]string{
				"memory.limit_in_bytes":                              "9223372036854771712\n",
				"system.slice/memory.limit_in_bytes":                 "16777216\n",
				"system.slice/memory.failcnt":                        "1350\n",
				"system.slice/memory.memsw.failcnt":                  "2\n",
				"system.slice/memory.max_usage_in_bytes":             "16777216\n",
				"system.slice/gpuletd.service/memory.limit_in_bytes": "9223372036854771712\n",
				"system.slice/gpuletd.service/memory.oom_control":    "oom_kill_disable 0\nunder_oom 0\noom_kill 4\n",
				"system.slice/gpuletd.service/memory.failcnt":        "0\n",
				"system.slice/gpuletd.service/memory.usage_in_bytes": "5000\n",
				"system.slice/gpuletd.service/memory.stat":           "cache 3000\nrss 2000\ninactive_file 100\ntotal_rss 2000\ntotal_inactive_file 2500\n",
			},
			want: Counts{Usage: 5000, WorkingSet: 2500, Kills: 4, Limit: 16 << 20, LimitOf: "/system.slice", LimitHits: 1352, Peak: 16 << 20}},
		{name: "v1 on a kernel without the kill count",
			tree: map[string]string{
				"system.slice/gpuletd.service/memory.oom_control": "oom_kill_disable 0\nunder_oom 0\n",
			},
			want: Counts{Usage: -1, WorkingSet: -1, Kills: -1, LimitHits: -1, Peak: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			files(t, root, tc.tree)
			g := Group{Group: cgroupfs.Group{Name: "/system.slice/gpuletd.service", Dir: filepath.Join(root, "system.slice/gpuletd.service"), V2: tc.v2, Root: root}}
			c, err := g.Read()
			require.NoError(t, err)
			require.Equal(t, tc.want, c)
		})
	}
}

func TestReachedLimit(t *testing.T) {
	limited := func(hits, peak int64) Counts {
		return Counts{Kills: 0, Limit: 1 << 30, LimitOf: "/a", LimitHits: hits, Peak: peak}
	}
	for _, tc := range []struct {
		name    string
		at, now Counts
		want    bool
	}{
		{"its limit's group counted a hit", limited(2, 1<<30), limited(3, 1<<30), true},
		{"no hit, its peak long at the limit", limited(2, 1<<30), limited(2, 1<<30), false},
		{"its peak reached the limit since", limited(0, 1<<29), limited(0, 1<<30), true},
		{"neither", limited(0, 1<<29), limited(0, 1<<29+1), false},
		{"hits unknown, peak unknown", limited(-1, -1), limited(-1, -1), false},
		{"no limit", Counts{Kills: 0, LimitHits: -1, Peak: -1}, Counts{Kills: 1, LimitHits: -1, Peak: -1}, false},
		{"another group's hits", Counts{Limit: 1 << 30, LimitOf: "/b", LimitHits: 0, Peak: 1 << 30}, limited(3, 1<<29), false},
		{"a limit set since, the peak above it", Counts{Kills: 0, LimitHits: -1, Peak: -1}, limited(0, 1<<31), true},
		{"a limit lowered since, the peak at it", limited(0, 1<<30), Counts{Limit: 1 << 29, LimitOf: "/a", LimitHits: 0, Peak: 1 << 30}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.now.ReachedLimit(tc.at))
		})
	}
}

func TestReadAGroupGone(t *testing.T) {
	_, err := Group{Group: cgroupfs.Group{Name: "/gone", Dir: filepath.Join(t.TempDir(), "gone"), V2: true}}.Read()
	require.ErrorContains(t, err, "read memory.events")
}

// This machine's own memory cgroup is found and read where it has one.
func TestSelf(t *testing.T) {
	g, err := Self()
	if errors.Is(err, ErrNone) {
		t.Skip("no memory cgroup here")
	}
	require.NoError(t, err)
	require.DirExists(t, g.Dir)
	c, err := g.Read()
	require.NoError(t, err)
	require.GreaterOrEqual(t, c.Kills, int64(-1))
}
