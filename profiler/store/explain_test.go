package store

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriterFoundReadOnlyIsRetired: a writer whose writes SQLite refuses as
// read-only (here by query_only, as a file system remounted read-only
// would) is given up, and Recover connects a new one that writes.
func TestWriterFoundReadOnlyIsRetired(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	_, err := s.w.ExecContext(ctx, "PRAGMA query_only = 1")
	require.NoError(t, err)
	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "refused"})
	require.ErrorIs(t, err, ErrReadOnly)
	ok, _ := s.Writable()
	require.False(t, ok)
	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "refused without asking SQLite"})
	require.ErrorIs(t, err, ErrReadOnly)

	require.NoError(t, s.Recover(ctx))
	ok, why := s.Writable()
	require.True(t, ok, "%v", why)
	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "written"})
	require.NoError(t, err)
	evs, err := s.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, evs, 1)
}

// asUnprivileged makes the calling test run as a user that file permissions
// bind: the test itself when this process is not root; otherwise a copy of
// the test binary that runs only that test as nobody (setpriv), whose
// result it requires, and then true: the caller returns.
func asUnprivileged(t *testing.T) (ranInChild bool) {
	t.Helper()
	if os.Geteuid() != 0 {
		return false
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("SKIPPED: running as root, and setpriv (util-linux) is missing to run this test as another user")
	}
	// The test binary's own folder is root's alone: copy it where nobody
	// may run it.
	dir, err := os.MkdirTemp("", "gpuletd-store-test-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	self, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(dir, "store.test")
	copyFile(t, self, bin, 0o755)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
		bin, "-test.run", "^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "TMPDIR=/tmp")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: "+t.Name())
	require.NotContains(t, string(out), "--- SKIP", "%s", out)
	return true
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

// TestDatabaseTheUserMayNotWrite: a database whose file or folder its user
// may not write (left by a run as another user, or made read-only) opens
// read-only with the fallback and says why and what to run; without it,
// Open fails saying so. Once the files may be written, Recover makes it
// writable: it does not keep a connection SQLite opened read-only.
func TestDatabaseTheUserMayNotWrite(t *testing.T) {
	if asUnprivileged(t) {
		return
	}
	for _, tt := range []struct {
		name         string
		file, folder os.FileMode
		says         string
	}{
		{"the file", 0o444, 0o755, "chmod -R u+w "},
		{"the folder", 0o644, 0o555, "which may not write it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "state")
			path := filepath.Join(dir, "gpuletd.db")
			s, err := Open(ctx, path)
			require.NoError(t, err)
			_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "before"})
			require.NoError(t, err)
			require.NoError(t, s.Close())
			require.NoError(t, os.Chmod(path, tt.file))
			require.NoError(t, os.Chmod(dir, tt.folder))
			t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })

			_, err = Open(ctx, path)
			require.ErrorIs(t, err, ErrReadOnly)
			require.ErrorIs(t, err, ErrPermission)

			s, err = Open(ctx, path, WithReadOnlyFallback())
			require.NoError(t, err)
			defer func() { require.NoError(t, s.Close()) }()
			ok, why := s.Writable()
			require.False(t, ok)
			require.ErrorIs(t, why, ErrPermission)
			require.Contains(t, why.Error(), tt.says)
			_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "refused"})
			require.ErrorIs(t, err, ErrReadOnly)
			require.ErrorIs(t, err, ErrPermission)
			err = s.Recover(ctx)
			require.ErrorIs(t, err, ErrPermission, "still not writable")
			require.True(t, strings.Contains(err.Error(), path), "%v", err)

			// What the message says to run: SQLite made the log and the
			// index as read-only as the file.
			require.NoError(t, exec.Command("chmod", "-R", "u+w", dir).Run())
			require.NoError(t, s.Recover(ctx))
			ok, why = s.Writable()
			require.True(t, ok, "%v", why)
			_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "after"})
			require.NoError(t, err)
			evs, err := s.Events(ctx, 0, 0)
			require.NoError(t, err)
			require.Len(t, evs, 2)
		})
	}
}
