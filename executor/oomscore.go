package executor

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// oomScoreRaise is how much an executor raises its out-of-memory score
// adjustment over the one it inherited from the daemon (the scale runs
// from -1000 to 1000). The kernel's killer weighs each process's memory
// plus that adjustment in thousandths of the memory it may use, so with
// half of it added an executor is chosen before the daemon whenever
// memory runs out: the daemon stays up, answers for the others, says what
// happened and starts the executor again, where killing the daemon would
// take every gpu-let down with it.
const oomScoreRaise = 500

// oomScoreAdjPath is where Linux keeps a process's own adjustment.
const oomScoreAdjPath = "/proc/self/oom_score_adj"

// oomScoreRaiseExpendable is the raise of an executor that only measures
// (a profile job's, ProcessOptions.Expendable): the whole scale, so that
// the killer takes it before any executor that serves, whose raise is
// oomScoreRaise. A model profiled beside the serving gpu-lets on a host
// short of memory then costs its own profile, not the served models.
const oomScoreRaiseExpendable = 1000

// volunteerForOOM raises the adjustment in file (oomScoreAdjPath) by raise,
// to at most 1000. Raising it needs no privilege.
func volunteerForOOM(file string, raise int) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("read oom_score_adj: %w", err)
	}
	was, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("read oom_score_adj: %w", err)
	}
	now := min(1000, was+raise)
	if err := os.WriteFile(file, []byte(strconv.Itoa(now)), 0); err != nil {
		return was, fmt.Errorf("raise oom_score_adj: %w", err)
	}
	return now, nil
}
