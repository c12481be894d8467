package mps

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// xidFeed is a mock event set fed by the test: Wait hands over the events
// sent, or times out as NVML does after its wait.
type xidFeed struct {
	mock.EventSet
	events chan nvml.EventData
	freed  chan struct{}
}

func newXidFeed() *xidFeed {
	f := &xidFeed{events: make(chan nvml.EventData, 8), freed: make(chan struct{})}
	f.WaitFunc = func(ms uint32) (nvml.EventData, nvml.Return) {
		select {
		case ev := <-f.events:
			return ev, nvml.SUCCESS
		case <-time.After(time.Duration(ms) * time.Millisecond / 10):
			return nvml.EventData{}, nvml.ERROR_TIMEOUT
		}
	}
	f.FreeFunc = func() nvml.Return { close(f.freed); return nvml.SUCCESS }
	return f
}

// The manager watches every GPU for Xid errors from Start to Close: each is
// counted on its device and heard by OnXid; an application's fault leaves
// the device healthy, a fatal one fails it with what to do.
func TestManagerWatchesXidErrors(t *testing.T) {
	f := newFakeMPS(t)
	s, mocks := newServer(t, gpus.H100_SXM5_80GB, 2)
	feed := newXidFeed()
	s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return feed, nvml.SUCCESS }
	var regMu sync.Mutex
	registered := map[string]uint64{}
	sets := map[string]nvml.EventSet{}
	for _, g := range mocks {
		g.RegisterEventsFunc = func(types uint64, set nvml.EventSet) nvml.Return {
			regMu.Lock()
			registered[g.UUID], sets[g.UUID] = types, set
			regMu.Unlock()
			return nvml.SUCCESS
		}
	}
	heard := make(chan XidEvent, 8)
	m, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, RuntimeDir: f.root, MPS: testMPSSpec(f)}, NVML: s, Logger: zap.NewNop(),
		OnXid: func(x XidEvent) { heard <- x }})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, m.Start(ctx))
	eventually(t, func() bool {
		regMu.Lock()
		defer regMu.Unlock()
		return len(registered) == 2
	}, "both GPUs registered")
	regMu.Lock()
	for _, g := range mocks {
		require.Equal(t, uint64(nvml.EventTypeXidCriticalError), registered[g.UUID])
		require.Same(t, feed, sets[g.UUID])
	}
	regMu.Unlock()

	feed.events <- nvml.EventData{Device: mocks[0], EventType: nvml.EventTypeXidCriticalError, EventData: 31}
	x := <-heard
	require.Equal(t, "gpu0", x.Device)
	require.Equal(t, uint64(31), x.Xid)
	require.False(t, x.Fatal)
	require.Contains(t, x.Meaning, "a GPU memory page fault")
	inv := m.Inventory()
	require.Equal(t, HealthOK, inv.Devices[0].Health, "an application's fault")
	require.Equal(t, map[uint64]int{31: 1}, inv.Devices[0].XidErrors)

	feed.events <- nvml.EventData{Device: mocks[1], EventType: nvml.EventTypeXidCriticalError, EventData: 79}
	x = <-heard
	require.Equal(t, "gpu1", x.Device)
	require.True(t, x.Fatal)
	inv = m.Inventory()
	require.Equal(t, HealthFailed, inv.Devices[1].Health)
	require.Equal(t, "Xid 79, the GPU has fallen off the bus: nothing more runs on it until it is reset (nvidia-smi -r) or the host rebooted",
		inv.Devices[1].HealthDetail)
	require.Equal(t, map[uint64]int{79: 1}, inv.Devices[1].XidErrors)
	_, err = m.Lease(Gpulet{ID: "g", Device: "gpu1", Size: 50})
	require.ErrorIs(t, err, ErrBadGpulet)

	// Other events, and those of GPUs it does not serve, are not Xids of its
	// devices.
	feed.events <- nvml.EventData{Device: mocks[0], EventType: nvml.EventTypeSingleBitEccError, EventData: 1}
	other := &mock.Device{GetUUIDFunc: func() (string, nvml.Return) { return "GPU-elsewhere", nvml.SUCCESS }}
	feed.events <- nvml.EventData{Device: other, EventType: nvml.EventTypeXidCriticalError, EventData: 79}
	feed.events <- nvml.EventData{Device: mocks[0], EventType: nvml.EventTypeXidCriticalError, EventData: 31}
	x = <-heard
	require.Equal(t, "gpu0", x.Device)
	require.Equal(t, map[uint64]int{31: 2}, m.Inventory().Devices[0].XidErrors)
	require.Empty(t, heard)

	require.NoError(t, m.Close(ctx))
	select {
	case <-feed.freed:
	case <-time.After(5 * time.Second):
		t.Fatal("the event set was not freed at Close")
	}
}

// Where NVML cannot make an event set, nothing is watched and the manager
// serves on.
func TestManagerWithoutXidEvents(t *testing.T) {
	f := newFakeMPS(t)
	s, _ := newServer(t, gpus.H100_SXM5_80GB, 1)
	s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
	core, logs := observer.New(zapcore.InfoLevel)
	m, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, RuntimeDir: f.root, MPS: testMPSSpec(f)}, NVML: s, Logger: zap.New(core)})
	require.NoError(t, err)
	require.NoError(t, m.Start(context.Background()))
	eventually(t, func() bool {
		return logs.FilterMessageSnippet("Xid errors are not watched").Len() == 1
	}, "said once")
	require.Equal(t, HealthOK, m.Inventory().Devices[0].Health)
	require.NoError(t, m.Close(context.Background()))
}

func TestXidWords(t *testing.T) {
	for _, tc := range []struct {
		xid   uint64
		fatal bool
		words string
	}{
		{13, false, "a graphics engine exception"},
		{48, true, "a double-bit ECC error"},
		{94, false, "a contained ECC error"},
		{95, true, "an uncontained ECC error"},
		{9999, false, "see NVIDIA's Xid catalog"},
	} {
		words, fatal := xidWords(tc.xid)
		require.Equal(t, tc.fatal, fatal, tc.xid)
		require.Contains(t, words, tc.words, tc.xid)
	}
}
