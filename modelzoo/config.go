package modelzoo

import (
	"fmt"
	"strings"
)

// ConfigYAML returns the commented config.yaml that WriteRepository writes
// for m: its SLO, largest batch and emulation profile.
func ConfigYAML(m Model, seed uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: %s; weights are random (modelzoo seed %d).\n", m.Name, m.Description, seed)
	fmt.Fprintf(&b, "%-21s# latency SLO, Go duration; required\n", "slo: "+m.SLO.String())
	fmt.Fprintf(&b, "%-21s# largest batch; dimension 0 of every input is the batch dimension\n", fmt.Sprintf("max_batch_size: %d", m.MaxBatchSize))
	fmt.Fprintf(&b, "%-21s# curve name used on emulated devices (name in a reference profile set)\n", "profile: "+m.Profile)
	return b.String()
}
