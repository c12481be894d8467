package cpucg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cgroup string
		mounts string // mountinfo lines, with @ for the test's folder
		tree   map[string]string
		want   Limit
	}{
		{name: "docker run --cpus 1.5 on cgroup v2 (a namespace: the group is the mount's root)",
			cgroup: "0::/\n",
			mounts: "25 22 0:22 / @ ro - cgroup2 cgroup rw\n",
			tree:   map[string]string{"cpu.max": "150000 100000\n"},
			want:   Limit{CPUs: 1.5, Of: "/"}},
		{name: "no limit on v2",
			cgroup: "0::/system.slice/gpuletd.service\n",
			mounts: "25 22 0:22 / @ rw - cgroup2 cgroup2 rw\n",
			tree:   map[string]string{"system.slice/gpuletd.service/cpu.max": "max 100000\n", "system.slice/cpu.max": "max 100000\n"},
			want:   Limit{}},
		{name: "a Kubernetes pod's limit above its container's looser one",
			cgroup: "0::/kubepods/pod1/c1\n",
			mounts: "25 22 0:22 / @ rw - cgroup2 cgroup2 rw\n",
			tree: map[string]string{"kubepods/pod1/c1/cpu.max": "400000 100000\n", "kubepods/pod1/cpu.max": "200000 100000\n",
				"kubepods/cpu.max": "max 100000\n"},
			want: Limit{CPUs: 2, Of: "/kubepods/pod1"}},
		{name: "systemd's CPUQuota=50% on a v1 host, cpu and cpuacct joined",
			cgroup: "4:cpu,cpuacct:/system.slice/gpuletd.service\n3:memory:/system.slice/gpuletd.service\n0::/\n",
			mounts: "32 31 0:29 / @/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n",
			tree: map[string]string{
				"cpu,cpuacct/system.slice/gpuletd.service/cpu.cfs_quota_us":  "50000\n",
				"cpu,cpuacct/system.slice/gpuletd.service/cpu.cfs_period_us": "100000\n",
				"cpu,cpuacct/system.slice/cpu.cfs_quota_us":                  "-1\n",
				"cpu,cpuacct/system.slice/cpu.cfs_period_us":                 "100000\n",
			},
			want: Limit{CPUs: 0.5, Of: "/system.slice/gpuletd.service"}},
		{name: "v2 without the cpu controller",
			cgroup: "0::/a\n",
			mounts: "25 22 0:22 / @ rw - cgroup2 cgroup2 rw\n",
			tree:   map[string]string{"a/cgroup.procs": ""},
			want:   Limit{}},
		{name: "no cgroup file system",
			cgroup: "0::/\n",
			mounts: "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n",
			want:   Limit{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.tree == nil {
				tc.tree = map[string]string{}
			}
			tc.tree["cgroup"], tc.tree["mountinfo"] = tc.cgroup, strings.ReplaceAll(tc.mounts, "@", dir)
			for name, content := range tc.tree {
				p := filepath.Join(dir, name)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
			}
			got, err := Of(filepath.Join(dir, "cgroup"), filepath.Join(dir, "mountinfo"))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestOfUnreadable(t *testing.T) {
	_, err := Of(filepath.Join(t.TempDir(), "none"), "/proc/self/mountinfo")
	require.ErrorContains(t, err, "read cgroup")
}

// Self reads this machine's own cgroup without error, whatever limit it has.
func TestSelf(t *testing.T) {
	_, err := Self()
	require.NoError(t, err)
}
