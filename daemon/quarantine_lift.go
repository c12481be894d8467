package daemon

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gpulet/gpuletd/profiler/store"
)

// quarantineLifted is the answer to DELETE /api/v1/models/{model}/quarantine:
// what the model's crash suspects held before they were forgotten.
type quarantineLifted struct {
	Model       string `json:"model"`
	Quarantined int    `json:"quarantined"`
	Suspects    int    `json:"suspects"`
	Hanging     int    `json:"hanging"`
}

// handleLiftQuarantine forgets a model's quarantined, suspect and hanging
// requests (crash_suspects.go), every version's it serves, at an
// operator's word: one who knows that a request was quarantined for a
// fault not its own (a GPU that faulted by itself), or who fixed what it
// found, lets it run again without loading the model anew. An info event
// says so.
func (n *node) handleLiftQuarantine(w http.ResponseWriter, r *http.Request) {
	m, ok := n.servedModel(w, r)
	if !ok {
		return
	}
	out := quarantineLifted{Model: m.Family}
	versions := n.catalog.family(m.Family)
	if len(versions) == 0 { // a pipeline: its own requests alone
		versions = append(versions, m)
	}
	now := time.Now()
	for _, v := range versions {
		s, q, h := n.crashes.lift(v.Name, now)
		out.Suspects, out.Quarantined, out.Hanging = out.Suspects+s, out.Quarantined+q, out.Hanging+h
	}
	n.events.add(EventRequestQuarantined, store.SeverityInfo,
		fmt.Sprintf("quarantine of %s lifted by the operator: %d quarantined, %d suspect and %d hanging requests run again as any other", out.Model, out.Quarantined, out.Suspects, out.Hanging),
		map[string]string{"model": out.Model, "lifted": "true", "quarantined": strconv.Itoa(out.Quarantined), "suspects": strconv.Itoa(out.Suspects), "hanging": strconv.Itoa(out.Hanging)})
	writeJSON(w, http.StatusOK, out)
}
