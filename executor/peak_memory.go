package executor

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// selfStatusPath is where Linux describes the calling process, its memory
// high-water mark (VmHWM) among the rest.
const selfStatusPath = "/proc/self/status"

// peakResident reads the most memory the process has held resident since
// it started, in bytes, from a status file of the kernel's (selfStatusPath);
// 0 when the file cannot be read or has no VmHWM line. Read after a model's
// warm-up at every batch size it serves, it is what the model needs on a
// CPU gpu-let: the engine's weights, its arena at the largest batch and the
// process itself.
func peakResident(file string) int64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != "VmHWM" {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 {
			return 0
		}
		return kb << 10
	}
	return 0
}
