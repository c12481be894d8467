package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/profiler/store"
)

// A gpuletd profile measuring into the daemon's database is in its status,
// by the names the daemon serves its file under; the daemon's own runs are
// not.
func TestStatusSaysWhatIsProfiledBeside(t *testing.T) {
	ctx := context.Background()
	n, st := historyNode(t)
	n.catalog = newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), st, n.events, zap.NewNop())
	sha := strings.Repeat("a", 64)
	for _, name := range []string{"lenet5", "lenet5b"} {
		m := &repository.Model{Name: name, SHA256: sha, Version: 1}
		m.Config.SLO = config.Duration(time.Second)
		require.NoError(t, n.catalog.add(ctx, m))
	}
	require.Empty(t, n.profiledBeside(context.Background()))

	_, err := st.StartRun(ctx, sha, "cpu", "") // the daemon's own live profile
	require.NoError(t, err)
	require.Empty(t, n.profiledBeside(context.Background()))

	cli, err := store.Open(ctx, st.Path(), store.WithOwner("gpuletd profile (pid 7)"))
	require.NoError(t, err)
	defer cli.Close()
	run, err := cli.StartRun(ctx, sha, "cpu", "")
	require.NoError(t, err)
	got := n.profiledBeside(context.Background())
	require.Len(t, got, 1)
	require.Equal(t, "gpuletd profile (pid 7)", got[0].By)
	require.ElementsMatch(t, []string{"lenet5", "lenet5b"}, got[0].Models)
	require.Equal(t, "cpu", got[0].DeviceType)

	require.NoError(t, cli.FinishRun(ctx, run.ID, store.RunComplete, ""))
	require.Empty(t, n.profiledBeside(context.Background()))
}
