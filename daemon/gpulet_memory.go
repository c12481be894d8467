package daemon

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gpulet/gpuletd/mps"
)

// What each gpu-let's executor holds in memory, for the status (and
// `gpuletd status`, the page) and the metrics, as `ollama ps` shows each
// model's size: the process's resident memory read from /proc, and the
// device memory NVML lists for its PID on an NVIDIA GPU (the inventory's
// compute and MPS process lists, of the GPU and of its MIG instances). Both
// are read when asked; neither asks the executor anything.

// gpuletMemory is what one executor holds.
type gpuletMemory struct {
	// HostBytes is the executor process's resident memory.
	HostBytes int64 `json:"host_bytes"`
	// DeviceBytes is the GPU memory NVML lists for it; 0 where it lists
	// none (a CPU or emulated gpu-let, a driver that does not say).
	DeviceBytes int64 `json:"device_bytes,omitempty"`
}

// procFS is where the kernel's process files are.
const procFS = "/proc"

// residentBytes reads a process's resident memory from its statm file
// (the second field: resident pages).
func residentBytes(root string, pid int) (int64, error) {
	b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "statm"))
	if err != nil {
		return 0, fmt.Errorf("read resident memory of process %d: %w", pid, err)
	}
	fields := bytes.Fields(b)
	if len(fields) < 2 {
		return 0, fmt.Errorf("read resident memory of process %d: statm %q has no resident field", pid, b)
	}
	pages, err := strconv.ParseInt(string(fields[1]), 10, 64)
	if err != nil || pages < 0 {
		return 0, fmt.Errorf("read resident memory of process %d: statm's resident field %q is not a count", pid, fields[1])
	}
	return pages * int64(os.Getpagesize()), nil
}

// deviceBytes is the memory NVML lists for process pid on device id of
// inv, on the device or any of its MIG instances; 0 when it lists none.
func deviceBytes(inv mps.Inventory, id string, pid int) int64 {
	for _, d := range inv.Devices {
		if d.ID != id {
			continue
		}
		lists := [][]mps.GPUProcess{d.Processes}
		if d.MIG != nil {
			for _, in := range d.MIG.Instances {
				lists = append(lists, in.Processes)
			}
		}
		for _, list := range lists {
			for _, p := range list {
				if p.PID == pid && p.UsedMemory > 0 {
					return int64(p.UsedMemory)
				}
			}
		}
	}
	return 0
}

// executorMemory is what the executor with process pid on device id
// holds, its process files read under root (procFS); nil when its process
// is gone or not started.
func executorMemory(root string, inv mps.Inventory, id string, pid int) *gpuletMemory {
	if pid <= 0 {
		return nil
	}
	host, err := residentBytes(root, pid)
	if err != nil {
		return nil
	}
	return &gpuletMemory{HostBytes: host, DeviceBytes: deviceBytes(inv, id, pid)}
}

// memory is what g's executor holds now; nil while it has no process.
func (g *gpuletRun) memory(inv mps.Inventory) *gpuletMemory {
	g.mu.Lock()
	pid := 0
	if g.proc != nil {
		pid = g.proc.Pid()
	}
	g.mu.Unlock()
	return executorMemory(procFS, inv, g.device.ID, pid)
}
