package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// EventFilter picks events of the history: of some kinds, at least as
// severe as a level, concerning one model, from a moment on. The zero
// filter picks every event. Match and the store's queries pick the same
// events (TestEventFilterMatchesTheQuery).
type EventFilter struct {
	// Kinds, when not empty, are the kinds picked.
	Kinds []string
	// MinSeverity, when set, is the least severity picked: warning picks
	// warnings and errors.
	MinSeverity Severity
	// Model, when set, picks the events recorded for that model: its
	// attribute model, or one of the comma-separated names of its
	// attribute models (an executor that restarted without them).
	Model string
	// After, when not zero, picks the events that happened at it or later.
	After time.Time
}

// severities are the severities from the least to the most severe.
var severities = []Severity{SeverityDebug, SeverityInfo, SeverityWarning, SeverityError}

// Severities are the severities from the least to the most severe.
func Severities() []Severity { return slices.Clone(severities) }

// ParseSeverity reads a severity's name.
func ParseSeverity(s string) (Severity, error) {
	if i := slices.Index(severities, Severity(s)); i >= 0 {
		return severities[i], nil
	}
	names := make([]string, len(severities))
	for i, v := range severities {
		names[i] = string(v)
	}
	return "", fmt.Errorf("unknown severity %q: one of %s", s, strings.Join(names, ", "))
}

// atLeast are the severities at least as severe as f.MinSeverity.
func (f EventFilter) atLeast() []Severity {
	if f.MinSeverity == "" {
		return nil
	}
	i := slices.Index(severities, f.MinSeverity)
	if i < 0 {
		return []Severity{f.MinSeverity} // unknown: only itself, as Match
	}
	return severities[i:]
}

// Match says whether f picks e.
func (f EventFilter) Match(e Event) bool {
	if len(f.Kinds) > 0 && !slices.Contains(f.Kinds, e.Kind) {
		return false
	}
	if least := f.atLeast(); least != nil && !slices.Contains(least, e.Severity) {
		return false
	}
	if f.Model != "" && e.Attrs["model"] != f.Model && !slices.Contains(strings.Split(e.Attrs["models"], ","), f.Model) {
		return false
	}
	return f.After.IsZero() || !e.At.Before(f.After)
}

// where is f as SQL conditions on the events table, each followed by
// " AND ", with their arguments.
func (f EventFilter) where() (string, []any) {
	var b strings.Builder
	var args []any
	if len(f.Kinds) > 0 {
		b.WriteString("kind IN (" + placeholders(len(f.Kinds)) + ") AND ")
		for _, k := range f.Kinds {
			args = append(args, k)
		}
	}
	if least := f.atLeast(); least != nil {
		b.WriteString("severity IN (" + placeholders(len(least)) + ") AND ")
		for _, s := range least {
			args = append(args, string(s))
		}
	}
	if f.Model != "" {
		b.WriteString(`(json_extract(attrs, '$.model') IS ? OR
 instr(',' || COALESCE(json_extract(attrs, '$.models'), '') || ',', ',' || ? || ',') > 0) AND `)
		args = append(args, f.Model, f.Model)
	}
	if !f.After.IsZero() {
		b.WriteString("at >= ? AND ")
		args = append(args, ns(f.After))
	}
	return b.String(), args
}

// EventsMatching is Events with only the events f picks: up to limit of
// them with an ID above sinceID, oldest first.
func (s *Store) EventsMatching(ctx context.Context, sinceID int64, limit int, f EventFilter) ([]Event, error) {
	if limit <= 0 {
		limit = -1
	}
	cond, args := f.where()
	return queryAll(ctx, s.reader(), fmt.Sprintf("list events since %d", sinceID), scanEvent,
		`SELECT id, at, kind, severity, message, attrs FROM events WHERE `+cond+`id > ? ORDER BY id LIMIT ?`,
		append(args, sinceID, limit)...)
}

// LatestEventsMatching is LatestEvents with only the events f picks: the
// newest limit of them (limit ≤ 0: all), oldest first.
func (s *Store) LatestEventsMatching(ctx context.Context, limit int, f EventFilter) ([]Event, error) {
	if limit <= 0 {
		limit = -1
	}
	cond, args := f.where()
	return queryAll(ctx, s.reader(), "list the latest events", scanEvent,
		`SELECT id, at, kind, severity, message, attrs FROM (
SELECT id, at, kind, severity, message, attrs FROM events WHERE `+cond+`1 ORDER BY id DESC LIMIT ?) ORDER BY id`,
		append(args, limit)...)
}
