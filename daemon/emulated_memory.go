package daemon

import (
	"path/filepath"

	"github.com/gpulet/gpuletd/executor"
	"github.com/gpulet/gpuletd/executor/engine"
	"github.com/gpulet/gpuletd/mps"
)

// inventory is the devices now, as n.devices gives them, with an emulated
// GPU's free memory what its executors' loads leave: they list what each
// holds in a file beside their sockets (engine.DeviceMemory), as a real
// GPU's driver counts its processes' memory. The status and /metrics read
// it; placement counts its own.
func (n *node) inventory() mps.Inventory {
	inv := n.devices.Inventory()
	for i := range inv.Devices {
		d := &inv.Devices[i]
		if d.Kind != mps.KindEmulated || d.MemoryTotal == 0 {
			continue
		}
		used, err := (&engine.DeviceMemory{Path: n.sup.emulatedMemory(d.ID)}).Used()
		if err != nil {
			continue // unreadable: the device's memory as configured, all free
		}
		d.MemoryFree = d.MemoryTotal - min(uint64(used*(1<<20)), d.MemoryTotal)
	}
	return inv
}

// emulatedMemory is the file the executors on emulated device id list their
// loads' memory in.
func (s *supervisor) emulatedMemory(id string) string {
	s.argsMu.Lock()
	defer s.argsMu.Unlock()
	return filepath.Join(s.sockDir, executor.EmulatedMemoryFile(id))
}
