package daemon

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
)

// oomHolds keeps a gpu-let whose start the kernel killed for memory from
// being started again at once: each re-plan (every reorganize_period)
// would otherwise start it again, take the memory again and make the
// kernel kill again. The same gpu-let — device, size and models — waits
// as a dead executor's restarts do (nextRestartBackoff: 1 minute, doubling
// to 10); one that starts, or any other, is not held.
type oomHolds struct {
	mu   sync.Mutex
	held map[string]oomHeld
}

// oomHeld is one gpu-let held: until when, the wait that set it, the
// start that was killed and the memory limit it was killed under (0: none
// known).
type oomHeld struct {
	until time.Time
	wait  time.Duration
	err   error
	limit int64
}

// startKey names a gpu-let to start: its device, size and models.
func startKey(sp gpuletSpec, models []*pb.LoadModelRequest) string {
	return sp.device.ID + "/" + strconv.Itoa(sp.size) + "/" + strings.Join(modelNamesOf(models), ",")
}

// check says why the gpu-let key is not started at now: nil when it may
// be — not held, its wait over, or the memory limit it was killed under
// raised or taken off since (systemctl set-property gpuletd MemoryMax=…),
// which look reads, only for a gpu-let held.
func (h *oomHolds) check(key string, now time.Time, look func() oomCounts) error {
	h.mu.Lock()
	held, ok := h.held[key]
	h.mu.Unlock()
	if !ok || !now.Before(held.until) || limitRaised(held.limit, look()) {
		return nil
	}
	return fmt.Errorf("not started again before %s, as its last start was killed for memory: %w", held.until.Local().Format(time.TimeOnly), held.err)
}

// done records how a start of the gpu-let key ended at now: a start the
// kernel killed for memory holds it (longer each time in a row), any
// other end lets it go. It says how long it holds it (0: not held).
func (h *oomHolds) done(key string, now time.Time, err error) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	killed, ok := asKilledForMemory(err)
	if !ok {
		delete(h.held, key)
		return 0
	}
	if h.held == nil {
		h.held = map[string]oomHeld{}
	}
	wait := nextRestartBackoff(h.held[key].wait, err)
	h.held[key] = oomHeld{until: now.Add(wait), wait: wait, err: err, limit: killed.limit}
	return wait
}

// clear lets every gpu-let go: an operator asked for a new plan.
func (h *oomHolds) clear() {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.held)
}
