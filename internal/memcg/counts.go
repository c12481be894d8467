package memcg

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Counts is what the kernel counts of a memory cgroup at one moment.
type Counts struct {
	// Usage is the memory the group holds now, page cache included
	// (memory.current on v2, memory.usage_in_bytes on v1); -1 unknown.
	Usage int64
	// WorkingSet is Usage less the file cache the kernel may drop at once
	// (inactive_file of memory.stat): what a limit is met by, as cAdvisor
	// and kubelet count it; -1 unknown.
	WorkingSet int64
	// Kills is the out-of-memory kills of the group's processes, by the
	// machine's killer or the group's own (oom_kill; Linux 4.13 and later
	// on v1); -1 unknown.
	Kills int64
	// Limit is the tightest memory limit over the group and the groups
	// above it, in bytes; 0 none.
	Limit int64
	// LimitOf names the group that sets Limit ("" with no limit).
	LimitOf string
	// LimitHits rises when the group that sets Limit reached it: v2
	// counts the times that left it out of memory (oom in memory.events),
	// v1 the times a charge met it (memory.failcnt and
	// memory.memsw.failcnt); -1 unknown or no limit.
	LimitHits int64
	// Peak is the largest usage of the group that sets Limit since it was
	// made (memory.peak on v2, memory.max_usage_in_bytes on v1); -1
	// unknown or no limit.
	Peak int64
}

// ReachedLimit says whether the group's memory reached its limit between
// at and c: the limit's group counted a hit since at, or its peak usage
// stands at the limit now where it did not at at (v1 may count no hit for
// anonymous memory; a limit set or lowered since at counts).
func (c Counts) ReachedLimit(at Counts) bool {
	if c.Limit == 0 {
		return false
	}
	same := c.LimitOf == at.LimitOf
	if same && at.LimitHits >= 0 && c.LimitHits > at.LimitHits {
		return true
	}
	already := same && at.Limit == c.Limit && at.Peak >= at.Limit
	return c.Peak >= c.Limit && !already
}

// unlimitedV1 is where v1 reads "no limit": the largest page count the
// kernel keeps, as bytes (9223372036854771712 with 4 KiB pages).
const unlimitedV1 = int64(1) << 62

// Read reads the group's counts now.
func (g Group) Read() (Counts, error) {
	c := Counts{Usage: -1, WorkingSet: -1, Kills: -1, LimitHits: -1, Peak: -1}
	kills, usage, inactive := "memory.oom_control", "memory.usage_in_bytes", "total_inactive_file"
	if g.V2 {
		kills, usage, inactive = "memory.events", "memory.current", "inactive_file"
	}
	ev, err := keyed(filepath.Join(g.Dir, kills))
	if err != nil {
		return c, err
	}
	c.Kills = valueOr(ev, "oom_kill")
	if n, err := number(filepath.Join(g.Dir, usage)); err == nil {
		c.Usage, c.WorkingSet = n, n
		if st, err := keyed(filepath.Join(g.Dir, "memory.stat")); err == nil {
			c.WorkingSet = max(0, n-max(0, st[inactive]))
		}
	}
	var dir string
	c.Limit, c.LimitOf, dir = g.limit()
	if c.Limit == 0 {
		return c, nil
	}
	if g.V2 {
		if ev, err := keyed(filepath.Join(dir, "memory.events")); err == nil {
			c.LimitHits = valueOr(ev, "oom")
		}
		if n, err := number(filepath.Join(dir, "memory.peak")); err == nil {
			c.Peak = n
		}
		return c, nil
	}
	for _, f := range []string{"memory.failcnt", "memory.memsw.failcnt"} {
		if n, err := number(filepath.Join(dir, f)); err == nil {
			c.LimitHits = max(c.LimitHits, 0) + n
		}
	}
	if n, err := number(filepath.Join(dir, "memory.max_usage_in_bytes")); err == nil {
		c.Peak = n
	}
	return c, nil
}

// limit walks from the group up to the hierarchy's root for the tightest
// limit (memory.max on v2, where "max" is none; memory.limit_in_bytes on
// v1): the limit, and the name and folder of the group that sets it.
func (g Group) limit() (limit int64, name, dir string) {
	file := "memory.limit_in_bytes"
	if g.V2 {
		file = "memory.max"
	}
	g.Up(func(n, d string) bool {
		if v, err := number(filepath.Join(d, file)); err == nil && v > 0 && v < unlimitedV1 && (limit == 0 || v < limit) {
			limit, name, dir = v, n, d
		}
		return true
	})
	return limit, name, dir
}

// keyed reads a file of "key value" lines.
func keyed(file string) (map[string]int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(file), err)
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

func valueOr(m map[string]int64, k string) int64 {
	if v, ok := m[k]; ok {
		return v
	}
	return -1
}

// errNoNumber is a file that holds no number ("max").
var errNoNumber = errors.New("not a number")

// number reads a file holding one number.
func number(file string) (int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, errNoNumber
	}
	return n, nil
}
