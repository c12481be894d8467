package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// adminPlacement is one model on a gpu-let.
type adminPlacement struct {
	Name      string  `json:"name"`
	Batch     int     `json:"batch"`
	Rate      float64 `json:"rate"`
	LatencyMS float64 `json:"latency_ms"`
	MeanBatch float64 `json:"mean_batch"`
	Requests  int64   `json:"requests"`
	Received  int64   `json:"received"`
	Failed    int64   `json:"failed"`
	// BatchTimeFactor is how much longer than profiled its batches ran
	// there lately; 0 from a daemon that does not say.
	BatchTimeFactor float64 `json:"batch_time_factor"`
	// SlowBatches: the daemon finds BatchTimeFactor well past the jitter
	// its scheduler is built for, worth a line.
	SlowBatches bool `json:"slow_batches"`
}

// adminModel is one model of the status (GET /api/v1/models).
type adminModel struct {
	Name         string  `json:"name"`
	Version      int     `json:"version"`
	SLOMS        float64 `json:"slo_ms"`
	SLOFrom      string  `json:"slo_from"`
	MaxBatchSize int     `json:"max_batch_size"`
	MaxQueue     int     `json:"max_queue"`
	// PriorityLevels and DefaultPriority: the model's priority levels.
	PriorityLevels  int `json:"priority_levels"`
	DefaultPriority int `json:"default_priority_level"`
	// QueuePolicies: the queue policies of its config.pbtxt that ask
	// something.
	QueuePolicies []repository.QueuePolicyStatus `json:"queue_policies"`
	ConfigFiles   []string                       `json:"config_files"`
	ConfigNotes   []string                       `json:"config_notes"`
	Warnings      []string                       `json:"warnings"`
	Rate          float64                        `json:"rate"`
	AssignedRate  float64                        `json:"assigned_rate"`
	// ExtraHeadroom is what the miss rule adds to the model's headroom.
	ExtraHeadroom float64     `json:"extra_headroom"`
	Unscheduled   float64     `json:"unscheduled_rate"`
	Ready         bool        `json:"ready"`
	Reason        string      `json:"reason"`
	Placed        []string    `json:"placed_on"`
	Recent        adminRecent `json:"recent"`
	Cache         *adminCache `json:"response_cache"`
	Sequences     *adminSeqs  `json:"sequences"`
	Runtime       *adminORT   `json:"onnxruntime"`
	Answered      *int64      `json:"answered"` // nil from a daemon that does not count them
	Failed        int64       `json:"failed"`
	LastRequest   *time.Time  `json:"last_request"`
}

// requestsText says how many requests the model had since the daemon
// started and when the last ended; "" from a daemon that does not say.
func (m *adminModel) requestsText(now time.Time) string {
	switch {
	case m.Answered == nil:
		return ""
	case m.LastRequest == nil:
		return "none since the start"
	}
	out := fmt.Sprintf("%d answered", *m.Answered)
	if m.Failed > 0 {
		out += fmt.Sprintf(", %d failed", m.Failed)
	}
	at := m.LastRequest.Local()
	when := at.Format(time.DateTime)
	if at.Format(time.DateOnly) == now.Local().Format(time.DateOnly) {
		when = at.Format(time.TimeOnly) // today
	}
	return out + fmt.Sprintf(" since the start; the last %s ago, at %s", uptime(now.Sub(*m.LastRequest)), when)
}

// adminCache is a model's use of the response cache (nil: not enabled).
type adminCache struct {
	Hits   int64   `json:"hits"`
	Misses int64   `json:"misses"`
	Rate   float64 `json:"rate"` // answered over the last second, outside the model's rate
	Off    string  `json:"off"`
}

// text says how the response cache served a model or pipeline.
func (c *adminCache) text() string {
	if c.Off != "" {
		return "enabled, but off: " + c.Off
	}
	if c.Rate > 0 {
		return fmt.Sprintf("%d hits, %d misses, %s now", c.Hits, c.Misses, perSecond(c.Rate))
	}
	return fmt.Sprintf("%d hits, %d misses", c.Hits, c.Misses)
}

// adminRecent is a model's latency window.
type adminRecent struct {
	Requests int `json:"requests"`
	// Answered is how many were answered; nil from a daemon that does not
	// say (its latencies then stand as given).
	Answered   *int    `json:"answered"`
	P50MS      float64 `json:"p50_ms"`
	P99MS      float64 `json:"p99_ms"`
	Attainment float64 `json:"slo_attainment"`
	MeanBatch  float64 `json:"mean_batch"`
	Violations int     `json:"violations"`
}

// extraHeadroomText says what the miss rule gave a model: x more headroom
// than the node's.
func extraHeadroomText(x float64) string {
	return fmt.Sprintf("planned with %.0f%% more headroom: it missed its SLO on a plan that held none of its load back (this fades while it stays within)", 100*x)
}

// notReadyWord is what a model that is not ready is: placed on a gpu-let
// that cannot answer it (its requests cannot fit the request limit), or not
// served at all.
func notReadyWord(placed bool) string {
	if placed {
		return "not ready"
	}
	return "not served"
}

// writeModels prints the models table and a line per unscheduled load.
func writeModels(w io.Writer, models []adminModel) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "MODEL\tSLO\tFROM\tRATE\tASSIGNED\tATTAIN\tP50\tP99\tPLACED ON")
	for _, m := range models {
		attain, p50, p99 := m.Recent.texts()
		placed := strings.Join(m.Placed, ",")
		if placed == "" {
			placed = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, sloText(m.SLOMS), sloFrom(m.SLOFrom), perSecond(m.Rate), perSecond(m.AssignedRate), attain, p50, p99, placed)
	}
	if len(models) == 0 {
		fmt.Fprintln(tw, "(none)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, m := range models {
		if m.Unscheduled > 0 {
			fmt.Fprintf(w, "%s: %s of its load has no gpu-let\n", m.Name, perSecond(m.Unscheduled))
		}
		if m.ExtraHeadroom > 0 {
			writeWrappedLine(w, m.Name+": "+extraHeadroomText(m.ExtraHeadroom))
		}
		if !m.Ready && m.Reason != "" {
			writeWrappedLine(w, m.Name+": "+notReadyWord(len(m.Placed) > 0)+": "+m.Reason)
		}
		for _, warning := range m.Warnings {
			if m.Ready || warning != m.Reason {
				writeWrappedLine(w, m.Name+": warning: "+warning)
			}
		}
		if c := m.Cache; c != nil && c.Rate > 0 {
			fmt.Fprintf(w, "%s: %s more answered by the response cache, outside RATE\n", m.Name, perSecond(c.Rate))
		}
	}
	writeConfigNotes(w, models)
	return nil
}

// writeConfigNotes prints each configuration note once, after the models it
// applies to (a Triton repository gives most models the same ones), in the
// order they first appear; gpuletd models show M lists a model's own.
func writeConfigNotes(w io.Writer, models []adminModel) {
	var notes []string
	who := map[string][]string{}
	for _, m := range models {
		for _, note := range m.ConfigNotes {
			if _, seen := who[note]; !seen {
				notes = append(notes, note)
			}
			who[note] = append(who[note], m.Name)
		}
	}
	for _, note := range notes {
		fmt.Fprintf(w, "%s: configuration: %s\n", someNames(who[note], 3), note)
	}
}

// someNames joins names, the first few and how many more past that.
func someNames(names []string, few int) string {
	if len(names) <= few+1 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:few], ", "), len(names)-few)
}

// texts are the window's attainment, p50 and p99 for a table, dashes
// before any request.
func (r adminRecent) texts() (attain, p50, p99 string) {
	switch {
	case r.Requests == 0:
		return "-", "-", "-"
	case r.Answered != nil && *r.Answered == 0: // every one refused: no latency to show
		return percent(r.Attainment), "-", "-"
	}
	return percent(r.Attainment), millis(r.P50MS), millis(r.P99MS)
}

// sloText is a model's SLO, a dash for one not known (a broken entry).
func sloText(ms float64) string {
	if ms <= 0 {
		return "-"
	}
	return millis(ms)
}

// sloFrom shortens where a model's SLO came from for the models table.
func sloFrom(s string) string {
	switch s {
	case repository.SLOFromYAML:
		return "yaml"
	case repository.SLOFromPbtxt:
		return "pbtxt"
	case repository.SLOFromDefault:
		return "default"
	case repository.SLOFromOverride:
		return "load"
	}
	if strings.HasSuffix(s, ".pbtxt parameters") { // a custom configuration's
		return "pbtxt"
	}
	return orDash(s)
}

// adminORT is how ONNX Runtime opens a model whose configuration says.
type adminORT struct {
	OpLibraries       []string `json:"op_libraries"`
	GraphOptimization string   `json:"graph_optimization"`
}

// priorityText says a model's priority levels in a line.
func priorityText(levels, def int) string {
	return fmt.Sprintf("%d levels, 1 the highest; a request that names none is at level %d; at overload the lower levels give way", levels, def)
}

// queuePolicyText says a model's queue policies in a line: "every level: a
// timeout of 150µs; level 1: at most 2 being served at once".
func queuePolicyText(policies []repository.QueuePolicyStatus) string {
	var parts []string
	for _, p := range policies {
		var what []string
		if p.TimeoutUS > 0 {
			t := "a timeout of " + (time.Duration(p.TimeoutUS) * time.Microsecond).String()
			switch {
			case p.TimeoutAction == tritonpb.ModelQueuePolicy_DELAY.String():
				t += " that refuses nothing (DELAY)"
			case p.AllowTimeoutOverride:
				t += " (a request's own may shorten it)"
			default:
				t += " (a request's own does not count)"
			}
			what = append(what, t)
		} else if p.AllowTimeoutOverride && p.TimeoutAction != tritonpb.ModelQueuePolicy_DELAY.String() {
			what = append(what, "a request's own timeout")
		}
		if p.MaxQueueSize > 0 {
			what = append(what, fmt.Sprintf("at most %d being served at once", p.MaxQueueSize))
		}
		if len(what) == 0 {
			continue
		}
		who := "every level"
		if p.Level > 0 {
			who = fmt.Sprintf("level %d", p.Level)
		}
		parts = append(parts, who+": "+strings.Join(what, ", "))
	}
	return strings.Join(parts, "; ")
}

// runtimeText says how ONNX Runtime opens a model, in a line: "custom
// operators from /m/libops.so; basic graph optimizations"; "" when it
// opens it as any other.
func runtimeText(opLibraries []string, graphOptimization string) string {
	var parts []string
	if len(opLibraries) > 0 {
		parts = append(parts, "custom operators from "+strings.Join(opLibraries, ", "))
	}
	if graphOptimization != "" {
		parts = append(parts, graphOptimization+" graph optimizations only")
	}
	return strings.Join(parts, "; ")
}

// adminSeqs is a stateful model's sequences (sequence_batching).
type adminSeqs struct {
	Live     int      `json:"live"`
	IdleMS   float64  `json:"idle_ms"`
	Max      int      `json:"max"`
	Controls []string `json:"controls"`
	States   []string `json:"states"`
}

// text says it in a line: "3 live of at most 4096, each ended after 5s
// idle; gpuletd fills START (start), CORRID (correlation ID); carries ACC
// from ACC_NEXT".
func (s *adminSeqs) text() string {
	idle := time.Duration(s.IdleMS * float64(time.Millisecond))
	out := fmt.Sprintf("%d live of at most %d, each ended after %s idle", s.Live, s.Max, idle)
	if len(s.Controls) > 0 {
		out += "; gpuletd fills " + strings.Join(s.Controls, ", ")
	}
	if len(s.States) > 0 {
		out += "; carries " + strings.Join(s.States, ", ")
	}
	return out
}
