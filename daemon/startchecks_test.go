package daemon

import (
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/internal/fsperm"
)

// TestSandboxHint: as a systemd service, a folder outside the unit's
// writable ones, or under the homes it hides, names the unit's setting to
// change; outside systemd, or where the unit is not in the way, nothing is
// added.
func TestSandboxHint(t *testing.T) {
	roFS := fmt.Errorf("%w: / is on a file system mounted read-only", fsperm.ErrReadOnlyFS)
	denied := fmt.Errorf("%w: /data belongs to root:root", fsperm.ErrPermission)
	tests := []struct {
		name    string
		systemd bool
		hint    func() string
		says    string
	}{
		{"a state_dir outside the unit's", true, func() string { return writeHint(roFS, "/data/gpuletd") },
			"; the service may write only /var/lib/gpuletd and /run/gpuletd (ProtectSystem=strict in its unit): run systemctl edit gpuletd and add [Service] ReadWritePaths=/data/gpuletd"},
		{"not under systemd", false, func() string { return writeHint(roFS, "/data/gpuletd") }, ""},
		{"a folder the unit lets it write", true, func() string { return writeHint(roFS, "/var/lib/gpuletd/sub") }, ""},
		{"a permission, not the sandbox", true, func() string { return writeHint(denied, "/data") }, ""},
		{"a repository under /home", true, func() string { return sandboxHint("/home/alice/models", false) },
			"; the service does not see /home, /root, /run/user (ProtectHome=yes in its unit): move the folder, or run systemctl edit gpuletd and add [Service] ProtectHome=read-only"},
		{"a repository elsewhere", true, func() string { return sandboxHint("/models", false) }, ""},
		{"/homework is not /home", true, func() string { return sandboxHint("/homework/models", false) }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.systemd {
				t.Setenv("INVOCATION_ID", "0123456789abcdef")
			} else {
				t.Setenv("INVOCATION_ID", "")
			}
			require.Equal(t, tt.says, tt.hint())
		})
	}
}

// TestInUseHint: an address another process holds names the command that
// finds it and the setting to change; other listen errors get nothing.
func TestInUseHint(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer held.Close()
	addr := held.Addr().String()
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	_, inUse := net.Listen("tcp", addr)
	require.Error(t, inUse)
	_, badAddr := net.Listen("tcp", "127.0.0.1:notaport")
	require.Error(t, badAddr)

	require.Equal(t, "; another process listens there (ss -ltnp 'sport = :"+port+"' names it): stop it, or give gpuletd another address in listen (GPULETD_LISTEN)",
		inUseHint(inUse, addr, "listen", "GPULETD_LISTEN"))
	require.Empty(t, inUseHint(badAddr, "127.0.0.1:notaport", "listen", "GPULETD_LISTEN"))
}

// TestRootOverAnotherUsersState: only root over a state folder of another
// user's is warned, naming the user and both ways out.
func TestRootOverAnotherUsersState(t *testing.T) {
	owner := func(uid uint32, name string, ok bool) func(string) (uint32, string, bool) {
		return func(string) (uint32, string, bool) { return uid, name, ok }
	}
	tests := []struct {
		name  string
		euid  int
		owner func(string) (uint32, string, bool)
		says  string
	}{
		{"root over the service's", 0, owner(999, "gpuletd", true),
			"running as root over state_dir /var/lib/gpuletd, which belongs to gpuletd: what this run makes there will be root's, and a daemon run as gpuletd (the service) may then not write it; " +
				"run it as that user (sudo -u gpuletd gpuletd serve …), or give it back after (chown -R gpuletd /var/lib/gpuletd)"},
		{"root over root's", 0, owner(0, "root", true), ""},
		{"a folder not there yet", 0, owner(0, "", false), ""},
		{"the service itself", 999, owner(999, "gpuletd", true), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.says, rootOverAnotherUsersState(tt.euid, "/var/lib/gpuletd", tt.owner))
		})
	}
}
