package daemon

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpulet/gpuletd/daemon/repository"
)

// loadChanges says in words what loading the versions next changes of
// those served now (served, of the same folder; none for a model not
// served): versions added or no longer served, and for a version served
// before its SLO, max_batch_size, max_queue, tensors and file. A load check lists them
// before a load; a load's answer and its event after.
func loadChanges(served, next []*repository.Model) []string {
	if len(served) == 0 {
		return nil
	}
	var out []string
	byVersion := map[int]*repository.Model{}
	for _, m := range served {
		byVersion[m.Version] = m
	}
	for _, m := range next {
		o, ok := byVersion[m.Version]
		delete(byVersion, m.Version)
		if !ok {
			out = append(out, fmt.Sprintf("version %d added", m.Version))
			continue
		}
		switch {
		case o.SLOSource != m.SLOSource:
			out = append(out, fmt.Sprintf("version %d: SLO %v (%s) → %v (%s)", m.Version, o.Config.SLO.D(), o.SLOSource, m.Config.SLO.D(), m.SLOSource))
		case o.Config.SLO != m.Config.SLO:
			out = append(out, fmt.Sprintf("version %d: SLO %v → %v (%s)", m.Version, o.Config.SLO.D(), m.Config.SLO.D(), m.SLOSource))
		}
		if o.Config.MaxBatchSize != m.Config.MaxBatchSize {
			out = append(out, fmt.Sprintf("version %d: max_batch_size %d → %d", m.Version, o.Config.MaxBatchSize, m.Config.MaxBatchSize))
		}
		if o.Config.MaxQueue != m.Config.MaxQueue {
			out = append(out, fmt.Sprintf("version %d: max_queue %s → %s", m.Version, queueText(o.Config.MaxQueue), queueText(m.Config.MaxQueue)))
		}
		if o.Config.PriorityLevels != m.Config.PriorityLevels || o.Config.DefaultPriority != m.Config.DefaultPriority {
			out = append(out, fmt.Sprintf("version %d: priority levels %s → %s", m.Version,
				priorityText(o.Config.PriorityLevels, o.Config.DefaultPriority), priorityText(m.Config.PriorityLevels, m.Config.DefaultPriority)))
		}
		for _, c := range tensorChanges("input", o.Inputs, m.Inputs) {
			out = append(out, fmt.Sprintf("version %d: %s", m.Version, c))
		}
		for _, c := range tensorChanges("output", o.Outputs, m.Outputs) {
			out = append(out, fmt.Sprintf("version %d: %s", m.Version, c))
		}
		if o.SHA256 != m.SHA256 {
			out = append(out, fmt.Sprintf("version %d: a new model file (sha256 %.12s, was %.12s)", m.Version, m.SHA256, o.SHA256))
		}
	}
	for _, v := range slices.Sorted(maps.Keys(byVersion)) {
		out = append(out, fmt.Sprintf("version %d no longer served", v))
	}
	return out
}

// tensorChanges says which of a version's inputs or outputs (kind) a load
// adds, removes or changes the datatype or dims of, in next's order, then
// the removed ones in was's: what its clients must change, since a request
// of the old form is refused once the load serves (and an output they read
// by name may be gone).
func tensorChanges(kind string, was, next []repository.TensorSpec) []string {
	var out []string
	old := map[string]repository.TensorSpec{}
	for _, t := range was {
		old[t.Name] = t
	}
	for _, t := range next {
		o, ok := old[t.Name]
		delete(old, t.Name)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s %q added (%s)", kind, t.Name, tensorWords(t)))
		case o.DataType != t.DataType || !slices.Equal(o.Dims, t.Dims):
			out = append(out, fmt.Sprintf("%s %q: %s → %s", kind, t.Name, tensorWords(o), tensorWords(t)))
		}
	}
	for _, t := range was {
		if _, gone := old[t.Name]; gone {
			out = append(out, fmt.Sprintf("%s %q removed (was %s)", kind, t.Name, tensorWords(t)))
		}
	}
	return out
}

// tensorWords writes a tensor's datatype and a request's dims, as the
// model's metadata gives them but without the batch dimension.
func tensorWords(t repository.TensorSpec) string {
	dims := make([]string, len(t.Dims))
	for i, d := range t.Dims {
		dims[i] = fmt.Sprint(d)
	}
	return fmt.Sprintf("%s [%s]", t.DataType, strings.Join(dims, ","))
}

// priorityText says a model's priority levels for a change's line.
func priorityText(levels, def int) string {
	if levels < 2 {
		return "none"
	}
	return fmt.Sprintf("%d (default %d)", levels, def)
}

// queueText is a model's own queue bound in words: "none" for 0.
func queueText(q int) string {
	if q == 0 {
		return "none"
	}
	return fmt.Sprint(q)
}
