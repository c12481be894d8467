package container

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		name  string
		env   map[string]string
		files []string
		want  bool
	}{
		{name: "a host", want: false},
		{name: "gpuletd's image or a systemd container manager", env: map[string]string{"container": "oci"}, want: true},
		{name: "a root file system exported from docker", files: []string{"/.dockerenv"}, want: false},
		{name: "podman", files: []string{"/run/.containerenv"}, want: true},
		{name: "another file", files: []string{"/run/.dockerenv"}, want: false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := detect(func(k string) string { return c.env[k] }, func(p string) bool { return slices.Contains(c.files, p) })
			require.Equal(t, c.want, got)
		})
	}
}
