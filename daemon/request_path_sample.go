package daemon

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpulet/gpuletd/internal/procfs"
	"github.com/gpulet/gpuletd/mps"
)

// samplePath looks at the CPU the request path has used so far: the
// daemon's CPU time and the requests it answered, and each CPU gpu-let of
// one core's executor (pathSample).
func (n *node) samplePath(now time.Time) pathSample {
	s := pathSample{at: now, lets: map[string]letSample{}}
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) == nil {
		s.daemonCPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	n.counters.m.Range(func(_, v any) bool {
		c := v.(*modelCounters)
		s.answered += c.success.count.Load() + c.fail.count.Load()
		return true
	})
	for _, g := range n.sup.list() {
		if g.device.Kind != mps.KindCPU || g.lease == nil || len(g.lease.Gpulet().Cores) != 1 {
			continue
		}
		st := g.pushed.Load()
		g.mu.Lock()
		proc := g.proc
		g.mu.Unlock()
		if st == nil || proc == nil {
			continue
		}
		cpu, err := procfs.CPUTime(proc.Pid())
		if err != nil {
			continue // it just ended: the period leaves it out
		}
		s.lets[g.id] = letSample{started: st.StartedMonoNs, sent: g.requests.total(),
			busy: time.Duration(st.BusyUs) * time.Microsecond, cpu: cpu}
	}
	return s
}
