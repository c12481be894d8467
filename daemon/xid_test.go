package daemon

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
)

// Xid errors become devices events once the node's events exist: a warning
// for an application's fault, an error for one that fails the GPU.
func TestXidErrorsBecomeEvents(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "g.db"))
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	var sink xidSink
	sink.heard(mps.XidEvent{Device: "gpu0", Xid: 31, Meaning: "a GPU memory page fault"}) // before the events: the device layer's log alone
	sink.to(newEvents(st, zap.NewNop()))
	sink.heard(mps.XidEvent{Device: "gpu0", Xid: 31, Meaning: "a GPU memory page fault"})
	sink.heard(mps.XidEvent{Device: "gpu1", Xid: 79, Meaning: "the GPU has fallen off the bus", Fatal: true})
	evs, err := st.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, evs, 2)
	byDevice := map[string]store.Event{}
	for _, e := range evs {
		require.Equal(t, EventDevices, e.Kind)
		byDevice[e.Attrs["device"]] = e
	}
	require.Equal(t, store.SeverityWarning, byDevice["gpu0"].Severity)
	require.Equal(t, "gpu0 reported Xid 31: a GPU memory page fault", byDevice["gpu0"].Message)
	require.Equal(t, "31", byDevice["gpu0"].Attrs["xid"])
	require.Equal(t, store.SeverityError, byDevice["gpu1"].Severity)
	require.Equal(t, "gpu1 reported Xid 79: the GPU has fallen off the bus; the device is failed until it is reset", byDevice["gpu1"].Message)
}
