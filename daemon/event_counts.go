package daemon

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/gpulet/gpuletd/profiler/store"
)

// eventCount is the key of the events counted: a kind and a severity.
type eventCount struct {
	kind string
	sev  store.Severity
}

// counted returns the events recorded since the start by kind and severity.
func (e *events) counted() map[eventCount]int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := maps.Clone(e.counts)
	if out == nil {
		out = map[eventCount]int64{}
	}
	return out
}

// problem is when a warning or an error was recorded.
type problem struct {
	at  time.Time
	sev store.Severity
}

// problemWindow is how far back the status counts warnings and errors.
const problemWindow = time.Hour

// maxProblems bounds the problems kept; past it the oldest go.
const maxProblems = 10000

// recentProblems is how many warnings and errors were recorded in the
// problemWindow before now, by this daemon and, read back at its start, by
// the one before it (recallProblems).
type recentProblems struct {
	Window   string `json:"window"`
	Warnings int    `json:"warnings"`
	Errors   int    `json:"errors"`
}

// recent counts the warnings and errors of the problemWindow before now.
func (e *events) recent(now time.Time) recentProblems {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.forgetProblemsLocked(now)
	out := recentProblems{Window: problemWindow.String()}
	for _, p := range e.problems {
		if p.sev == store.SeverityError {
			out.Errors++
		} else {
			out.Warnings++
		}
	}
	return out
}

// recallProblems reads back from the store the warnings and errors of the
// problemWindow before now, so that a restart (a crash, systemd's restart,
// an upgrade) does not hide the last hour's problems from the status. Call
// it once, before any event is added.
func (e *events) recallProblems(ctx context.Context, now time.Time) error {
	past, err := e.st.LatestEventsMatching(ctx, maxProblems, store.EventFilter{MinSeverity: store.SeverityWarning, After: now.Add(-problemWindow)})
	if err != nil {
		return fmt.Errorf("read the last hour's warnings: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	recalled := make([]problem, 0, len(past)+len(e.problems))
	for _, ev := range past {
		recalled = append(recalled, problem{at: ev.At, sev: ev.Severity})
	}
	e.problems = append(recalled, e.problems...)
	return nil
}

// forgetProblemsLocked drops the problems older than the window; e.mu is
// held.
func (e *events) forgetProblemsLocked(now time.Time) {
	i := 0
	for i < len(e.problems) && now.Sub(e.problems[i].at) > problemWindow {
		i++
	}
	e.problems = e.problems[i:]
}

// countLocked counts ev for the metrics and, a warning or an error, for
// the status; e.mu is held.
func (e *events) countLocked(ev store.Event) {
	if e.counts == nil {
		e.counts = map[eventCount]int64{}
	}
	e.counts[eventCount{ev.Kind, ev.Severity}]++
	if ev.Severity != store.SeverityWarning && ev.Severity != store.SeverityError {
		return
	}
	e.forgetProblemsLocked(ev.At)
	if len(e.problems) >= maxProblems {
		e.problems = e.problems[1:]
	}
	e.problems = append(e.problems, problem{at: ev.At, sev: ev.Severity})
}
