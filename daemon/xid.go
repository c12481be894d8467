package daemon

import (
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
)

// xidSink turns the Xid errors the device layer hears of into events. The
// device layer starts before the node's events exist: until to is called
// an Xid is logged (by the device layer) and counted on its device alone.
type xidSink struct {
	events atomic.Pointer[events]
}

// to sends the Xid errors heard from now on to ev.
func (s *xidSink) to(ev *events) { s.events.Store(ev) }

// heard records x as a devices event: an error for a fatal Xid (the device
// is failed, and the plan loop plans around it), else a warning.
func (s *xidSink) heard(x mps.XidEvent) {
	ev := s.events.Load()
	if ev == nil {
		return
	}
	sev, msg := store.SeverityWarning, fmt.Sprintf("%s reported Xid %d: %s", x.Device, x.Xid, x.Meaning)
	if x.Fatal {
		sev, msg = store.SeverityError, msg+"; the device is failed until it is reset"
	}
	ev.add(EventDevices, sev, msg, map[string]string{"device": x.Device, "xid": strconv.FormatUint(x.Xid, 10)})
}
