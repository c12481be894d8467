package mps

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"
)

// XidEvent is an Xid error the driver reported for a GPU: the driver's
// code for a fault it saw (a kernel's page fault, an ECC error, a GPU
// fallen off the bus), which it also writes to the kernel log.
type XidEvent struct {
	// Device and UUID name the GPU.
	Device, UUID string
	// Xid is the code, Meaning what it is in words.
	Xid     uint64
	Meaning string
	// Fatal says the GPU can run nothing more until it is reset: the
	// device is failed (Health) from then on.
	Fatal bool
	At    time.Time
}

// xidMeanings are the Xids gpuletd names, from NVIDIA's Xid catalog (the
// words are gpuletd's), and whether each leaves the GPU unusable until a
// reset. The others are reported by number.
var xidMeanings = map[uint64]struct {
	words string
	fatal bool
}{
	13:  {"a graphics engine exception, most often a kernel of an application that went out of bounds", false},
	31:  {"a GPU memory page fault: an application's kernel reached memory it does not own", false},
	32:  {"an invalid or corrupted push buffer stream", false},
	38:  {"a driver firmware error", false},
	43:  {"the GPU stopped processing an application's work after its fault", false},
	45:  {"preemptive cleanup after earlier errors", false},
	48:  {"a double-bit ECC error", true},
	61:  {"an internal micro-controller breakpoint or warning", false},
	62:  {"an internal micro-controller halt", true},
	63:  {"an ECC page retirement or row remapping was recorded", false},
	64:  {"an ECC page retirement or row remapping failed", true},
	68:  {"a video decoder exception", false},
	74:  {"an NVLink error", true},
	79:  {"the GPU has fallen off the bus", true},
	92:  {"a high rate of single-bit ECC errors", false},
	94:  {"a contained ECC error: only the application that used the memory is affected", false},
	95:  {"an uncontained ECC error: every application on the GPU is affected", true},
	109: {"a context switch timeout", false},
	119: {"a GSP RPC timeout", true},
	120: {"a GSP error", true},
}

// xidWords says what Xid x is, and whether it is fatal.
func xidWords(x uint64) (string, bool) {
	if m, ok := xidMeanings[x]; ok {
		return m.words, m.fatal
	}
	return "see NVIDIA's Xid catalog", false
}

// xidWait is how long one wait for events lasts, ms: how soon the watcher
// sees its context end.
const xidWait = 500

// watchXids registers every GPU of the inventory for Xid events and
// reports each one until ctx ends: logged, counted in the device's
// XidErrors, a fatal one failing the device, and handed to onXid. It
// returns at once where NVML cannot watch for them (said in the log).
func (m *Manager) watchXids(ctx context.Context, onXid func(XidEvent)) {
	set, err := call("create event set", m.lib.EventSetCreate)
	if err != nil {
		m.log.Warn("Xid errors are not watched: nothing reports a GPU's faults but the kernel log", zap.Error(err))
		return
	}
	defer func() { _ = guard("free event set", set.Free) }()
	byUUID := map[string]string{}
	m.mu.Lock()
	for _, d := range m.inv.Devices {
		h, ok := m.handles[d.ID]
		if !ok || d.Kind != KindNVIDIA || d.Health == HealthFailed {
			continue
		}
		if err := guard("register for Xid events", func() nvml.Return { return h.RegisterEvents(nvml.EventTypeXidCriticalError, set) }); err != nil {
			m.log.Warn("Xid errors of a GPU are not watched", zap.String("device", d.ID), zap.Error(err))
			continue
		}
		byUUID[d.UUID] = d.ID
	}
	m.mu.Unlock()
	if len(byUUID) == 0 {
		return
	}
	for ctx.Err() == nil {
		ev, err := call("wait for events", func() (nvml.EventData, nvml.Return) { return set.Wait(xidWait) })
		switch {
		case errors.Is(err, nvml.ERROR_TIMEOUT):
			continue
		case err != nil:
			m.log.Warn("Xid errors are no longer watched", zap.Error(err))
			return
		case ev.EventType != nvml.EventTypeXidCriticalError || ev.Device == nil:
			continue
		}
		uuid, err := call("get UUID", ev.Device.GetUUID)
		if err != nil {
			m.log.Warn("an Xid error of a GPU not named", zap.Uint64("xid", ev.EventData), zap.Error(err))
			continue
		}
		id, ok := byUUID[uuid]
		if !ok {
			continue
		}
		words, fatal := xidWords(ev.EventData)
		x := XidEvent{Device: id, UUID: uuid, Xid: ev.EventData, Meaning: words, Fatal: fatal, At: time.Now()}
		m.recordXid(x)
		if onXid != nil {
			onXid(x)
		}
	}
}

// recordXid logs an Xid error, counts it on its device and fails the
// device for a fatal one.
func (m *Manager) recordXid(x XidEvent) {
	log := m.log.Warn
	if x.Fatal {
		log = m.log.Error
	}
	log("Xid error", zap.String("device", x.Device), zap.Uint64("xid", x.Xid), zap.String("meaning", x.Meaning), zap.Bool("fatal", x.Fatal))
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.inv.Devices {
		d := &m.inv.Devices[i]
		if d.ID != x.Device {
			continue
		}
		if d.XidErrors == nil {
			d.XidErrors = map[uint64]int{}
		}
		d.XidErrors[x.Xid]++
		if x.Fatal && d.Health != HealthFailed {
			d.Health = HealthFailed
			d.HealthDetail = fmt.Sprintf("Xid %d, %s: %s", x.Xid, x.Meaning, untilReset)
		}
	}
}
