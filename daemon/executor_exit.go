package daemon

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gpulet/gpuletd/executor"
	"github.com/gpulet/gpuletd/internal/bytefmt"
	"github.com/gpulet/gpuletd/internal/crashlog"
	"github.com/gpulet/gpuletd/internal/memcg"
)

// vmstatPath is the kernel's virtual memory counters, among them oom_kill:
// the processes its out-of-memory killer killed since boot (Linux 4.13
// and later), a memory cgroup's limit's kills included.
const vmstatPath = "/proc/vmstat"

// readOOMKills reads oom_kill from the kernel's counters; false where the
// kernel does not count them (or the file cannot be read).
func readOOMKills() (int64, bool) {
	b, err := os.ReadFile(vmstatPath)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("oom_kill ")); ok {
			n, err := strconv.ParseInt(string(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// oomCounts is what the kernel counted of out-of-memory kills at one
// moment: the whole machine's, and the daemon's memory cgroup's, where its
// executors run (under systemd, the service's).
type oomCounts struct {
	host  int64       // oom_kill of /proc/vmstat; -1 unknown
	group memcg.Group // the daemon's memory cgroup; Name "" unknown
	cg    memcg.Counts
}

// lookOOM reads the kernel's counts now: the machine's, and those of the
// memory cgroup g (nil: none known).
func lookOOM(g *memcg.Group) oomCounts {
	c := oomCounts{host: -1}
	if n, ok := readOOMKills(); ok {
		c.host = n
	}
	if g != nil {
		if cg, err := g.Read(); err == nil && cg.Kills >= 0 {
			c.group, c.cg = *g, cg
		}
	}
	return c
}

// oomNow reads the kernel's counts through the supervisor's seam.
func (s *supervisor) oomNow() oomCounts {
	if s.oomLook != nil {
		return s.oomLook()
	}
	return lookOOM(s.memGroup)
}

// limitRaised says whether the memory limit over gpuletd, was bytes when a
// start was killed (0: none known), has been raised or taken off since, as
// the counts now read it.
func limitRaised(was int64, now oomCounts) bool {
	return was > 0 && now.group.Name != "" && (now.cg.Limit == 0 || now.cg.Limit > was)
}

// oomVerdict says whether the kernel's out-of-memory killer killed a
// process of gpuletd between at and now: "oom" when the memory cgroup
// gpuletd runs in counted a kill (its count is gpuletd's processes'
// alone), "likely" when only the machine's count rose (it may have been
// another process's), "" when neither rose, the cgroup's count staying
// put being the answer even while the machine's rose.
func oomVerdict(at, now oomCounts) string {
	switch {
	case at.group.Name != "" && at.group.Name == now.group.Name:
		if now.cg.Kills > at.cg.Kills {
			return "oom"
		}
		return ""
	case at.host >= 0 && now.host > at.host:
		return "likely"
	}
	return ""
}

// oomFix says what to do about an out-of-memory kill between at and now:
// raise the cgroup's limit when the cgroup reached it, else give the host
// more memory or the gpu-lets fewer models.
func oomFix(at, now oomCounts) string {
	if c := now.cg; at.group.Name != "" && c.ReachedLimit(at.cg) {
		file := "memory.limit_in_bytes"
		if now.group.V2 {
			file = "memory.max"
		}
		return fmt.Sprintf("gpuletd's processes reached their memory limit of %s (%s of cgroup %s; MemoryMax= in a systemd unit): raise it, or place fewer models per gpu-let; journalctl -k names the process the kernel chose",
			bytefmt.Size(c.Limit), file, c.LimitOf)
	}
	return "the host is short of memory: fewer models per gpu-let or more memory; journalctl -k names the process the kernel chose"
}

// exitWords says how an executor ended and what to do, for its restart
// event: exit is its wait error; unanswered says that gpuletd killed it
// for missing its health checks; said is the last error it logged ("":
// none), kept as last_error; at and now are the kernel's counts of
// out-of-memory kills when it started and now. A SIGKILL that gpuletd did
// not send is the OOM killer's when gpuletd's memory cgroup counted a
// kill, and most likely so when only the machine's count rose. An exit
// with executor.ExitDeviceFault is a GPU that failed for good in the
// executor's process (its CUDA context), named by said; one with
// executor.ExitRunHung a run that did not end (cause hang).
func exitWords(exit error, unanswered bool, said string, at, now oomCounts) (string, map[string]string) {
	attrs := map[string]string{"exit": fmt.Sprint(exit)}
	if said != "" {
		attrs["last_error"] = said
	}
	var ee *exec.ExitError
	ws, signaled, code := syscall.WaitStatus(0), false, -1
	if errors.As(exit, &ee) {
		if w, ok := ee.Sys().(syscall.WaitStatus); ok && w.Signaled() {
			ws, signaled = w, true
		}
		code = ee.ExitCode()
	}
	killed := signaled && ws.Signal() == syscall.SIGKILL
	switch verdict := oomVerdict(at, now); {
	case unanswered:
		return "executor did not answer its health checks and was killed; restarting it", attrs
	case code == executor.ExitRunHung:
		attrs["cause"] = "hang"
		return fmt.Sprintf("executor stopped: a run did not end (%s); restarting it", cmp.Or(said, "its log says which batch")), attrs
	case code == executor.ExitDeviceFault:
		attrs["cause"] = "device_fault"
		return fmt.Sprintf("executor stopped after its GPU failed for good in its process (%s); restarting it, with a new CUDA context", cmp.Or(said, "its log says which error")), attrs
	case killed && verdict == "oom":
		attrs["cause"], attrs["fix"] = "oom", oomFix(at, now)
		attrs["oom_kills"] = fmt.Sprintf("%d→%d", at.cg.Kills, now.cg.Kills)
		attrs["memory_cgroup"] = now.group.Name
		if now.cg.Limit > 0 {
			attrs["memory_limit"] = bytefmt.Size(now.cg.Limit)
		}
		return fmt.Sprintf("executor was killed by the kernel's out-of-memory killer (gpuletd's memory cgroup %s counted the kill); restarting it", now.group.Name), attrs
	case killed && verdict == "likely":
		attrs["cause"], attrs["fix"] = "oom", oomFix(at, now)
		attrs["oom_kills"] = fmt.Sprintf("%d→%d", at.host, now.host)
		return "executor was killed, most likely by the kernel's out-of-memory killer (its count of kills rose while the executor ran); restarting it", attrs
	case killed:
		return "executor was killed (SIGKILL) from outside gpuletd; restarting it", attrs
	case signaled:
		return fmt.Sprintf("executor crashed (%v); restarting it", exit), attrs
	case crashlog.IsHeadline(strings.TrimSuffix(said, crashlog.InC)):
		attrs["cause"] = "crash"
		return fmt.Sprintf("executor crashed: %s; restarting it", said), attrs
	}
	return "executor exited; restarting it", attrs
}

// diedGrace is how long a failed start waits for its executor to be seen
// dead before it kills it: a call that failed because the process died
// (killed while loading a model) comes a little before its exit.
const diedGrace = 100 * time.Millisecond

// failedStart ends an executor whose start failed with err, and says so
// when the kernel's out-of-memory killer most likely killed it first (it
// died by SIGKILL, before gpuletd killed it, while the kernel's count rose
// since oomAt): loading models is when an executor's memory grows most.
func (s *supervisor) failedStart(p *executor.Process, oomAt oomCounts, err error) error {
	died := false
	select {
	case <-p.Done():
		died = true
	case <-time.After(diedGrace):
	}
	_ = p.Kill()
	if !died {
		return err
	}
	now := s.oomNow()
	if _, attrs := exitWords(p.ExitErr(), false, "", oomAt, now); attrs["cause"] != "oom" {
		return err
	}
	return &killedForMemory{err: err, likely: oomVerdict(oomAt, now) == "likely", fix: oomFix(oomAt, now), limit: now.cg.Limit}
}

// killedForMemory is a start of an executor that the kernel's
// out-of-memory killer ended (likely: the machine's count rose, not
// gpuletd's cgroup's), with what to do and the memory limit over gpuletd
// then (0: none known).
type killedForMemory struct {
	err    error
	likely bool
	fix    string
	limit  int64
}

func (e *killedForMemory) Error() string {
	if e.likely {
		return fmt.Sprintf("%v: the executor was killed, most likely by the kernel's out-of-memory killer (%s)", e.err, e.fix)
	}
	return fmt.Sprintf("%v: the executor was killed by the kernel's out-of-memory killer (%s)", e.err, e.fix)
}

func (e *killedForMemory) Unwrap() error { return e.err }

// asKilledForMemory finds a start the kernel killed for memory in err.
func asKilledForMemory(err error) (*killedForMemory, bool) {
	return errors.AsType[*killedForMemory](err)
}

// Backoff of an executor whose starts the kernel kills for memory: each
// try takes the memory again and makes the kernel kill again (another
// process, where the executor's place in the killer's order does not
// spare it), so tries come minutes apart rather than seconds.
const (
	oomRestartBackoff0 = time.Minute
	oomRestartBackoffN = 10 * time.Minute
)

// nextRestartBackoff is the wait before the next try to start a dead
// executor after a try that failed with err, the wait before it having
// been cur: doubled up to restartBackoffN, and after a start the kernel
// killed for memory at least oomRestartBackoff0, doubled up to
// oomRestartBackoffN while that goes on.
func nextRestartBackoff(cur time.Duration, err error) time.Duration {
	if _, ok := asKilledForMemory(err); ok {
		return min(max(2*cur, oomRestartBackoff0), oomRestartBackoffN)
	}
	return min(2*cur, restartBackoffN)
}
