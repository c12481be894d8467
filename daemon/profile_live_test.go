package daemon

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/repository"
)

func TestLiveProfilesQueue(t *testing.T) {
	q := newLiveProfiles()
	a := &repository.Model{Name: "a"}
	require.True(t, q.ask(a))
	require.True(t, q.ask(a), "queued already")
	require.Len(t, q.queue, 1, "once")
	for i := range liveQueueLen - 1 {
		require.True(t, q.ask(&repository.Model{Name: fmt.Sprint("m", i)}))
	}
	require.False(t, q.ask(&repository.Model{Name: "late"}), "a full queue says so")
	require.Equal(t, a, <-q.queue)
	q.done("a")
	require.True(t, q.ask(a), "measured, it may be asked for again")
}
