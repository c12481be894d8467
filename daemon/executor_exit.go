package daemon

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/gpulet/gpuletd/executor"
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

// oomCount is the kernel's count of out-of-memory kills through the
// supervisor's seam; -1 when unknown.
func (s *supervisor) oomCount() int64 {
	read := s.oomKills
	if read == nil {
		read = readOOMKills
	}
	n, ok := read()
	if !ok {
		return -1
	}
	return n
}

// exitWords says how an executor ended and what to do, for its restart
// event: exit is its wait error; unanswered says that gpuletd killed it
// for missing its health checks; oomAt and oomNow are the kernel's
// out-of-memory kills when it started and now (-1: unknown). A SIGKILL
// that gpuletd did not send while the kernel's count rose is most likely
// the OOM killer's (the count is the whole machine's, hence "most
// likely").
func exitWords(exit error, unanswered bool, oomAt, oomNow int64) (string, map[string]string) {
	attrs := map[string]string{"exit": fmt.Sprint(exit)}
	var ee *exec.ExitError
	ws, signaled := syscall.WaitStatus(0), false
	if errors.As(exit, &ee) {
		if w, ok := ee.Sys().(syscall.WaitStatus); ok && w.Signaled() {
			ws, signaled = w, true
		}
	}
	switch {
	case unanswered:
		return "executor did not answer its health checks and was killed; restarting it", attrs
	case signaled && ws.Signal() == syscall.SIGKILL && oomAt >= 0 && oomNow > oomAt:
		attrs["cause"] = "oom"
		attrs["oom_kills"] = fmt.Sprintf("%d→%d", oomAt, oomNow)
		attrs["fix"] = "the host is short of memory: fewer models per gpu-let or more memory; journalctl -k names the process the kernel chose"
		return "executor was killed, most likely by the kernel's out-of-memory killer (its count of kills rose while the executor ran); restarting it", attrs
	case signaled && ws.Signal() == syscall.SIGKILL:
		return "executor was killed (SIGKILL) from outside gpuletd; restarting it", attrs
	case signaled:
		return fmt.Sprintf("executor crashed (%v); restarting it", exit), attrs
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
// from oomAt): loading models is when an executor's memory grows most.
func (s *supervisor) failedStart(p *executor.Process, oomAt int64, err error) error {
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
	if _, attrs := exitWords(p.ExitErr(), false, oomAt, s.oomCount()); attrs["cause"] == "oom" {
		return fmt.Errorf("%w: the executor was killed, most likely by the kernel's out-of-memory killer (%s)", err, attrs["fix"])
	}
	return err
}
