package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// filterT0 is when the first event of filterHistory happened; one a
// minute follows.
var filterT0 = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

// filterHistory stores a history whose events differ in each way a filter
// looks at, and returns them as stored.
func filterHistory(t *testing.T, s *Store) []Event {
	t.Helper()
	events := []Event{
		{Kind: "plan", Severity: SeverityInfo, Message: "plan applied"},
		{Kind: "profile_job", Severity: SeverityInfo, Message: "profiled resnet50", Attrs: map[string]string{"model": "resnet50", "device": "gpu0"}},
		{Kind: "plan", Severity: SeverityWarning, Message: "cannot be placed", Attrs: map[string]string{"model": "resnet5"}},
		{Kind: "executor_restart", Severity: SeverityError, Message: "restarted without some", Attrs: map[string]string{"gpulet": "g1", "models": "bert,resnet50"}},
		{Kind: "executor_restart", Severity: SeverityWarning, Message: "exited", Attrs: map[string]string{"gpulet": "g1", "models": "resnet50x"}},
		{Kind: "profile_job", Severity: SeverityDebug, Message: "a debug line", Attrs: map[string]string{"model": "bert"}},
		{Kind: "store", Severity: SeverityError, Message: "disk full", Attrs: map[string]string{"path": "resnet50"}},
		{Kind: "model_load", Severity: SeverityInfo, Message: "loaded", Attrs: map[string]string{"model": "a_b"}},
	}
	out := make([]Event, 0, len(events))
	for i, e := range events {
		e.At = filterT0.Add(time.Duration(i) * time.Minute)
		saved, err := s.AppendEvent(context.Background(), e)
		require.NoError(t, err)
		out = append(out, saved)
	}
	return out
}

// The store's query picks what Match picks, from the history and with a
// limit, and picks what each filter means.
func TestEventFilterMatchesTheQuery(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	all := filterHistory(t, s)
	tests := []struct {
		name string
		f    EventFilter
		want []string // messages, oldest first
	}{
		{"none", EventFilter{}, []string{"plan applied", "profiled resnet50", "cannot be placed", "restarted without some", "exited", "a debug line", "disk full", "loaded"}},
		{"one kind", EventFilter{Kinds: []string{"plan"}}, []string{"plan applied", "cannot be placed"}},
		{"two kinds", EventFilter{Kinds: []string{"store", "profile_job"}}, []string{"profiled resnet50", "a debug line", "disk full"}},
		{"a kind never written", EventFilter{Kinds: []string{"nothing"}}, nil},
		{"warnings and worse", EventFilter{MinSeverity: SeverityWarning}, []string{"cannot be placed", "restarted without some", "exited", "disk full"}},
		{"errors", EventFilter{MinSeverity: SeverityError}, []string{"restarted without some", "disk full"}},
		{"debug is everything", EventFilter{MinSeverity: SeverityDebug}, []string{"plan applied", "profiled resnet50", "cannot be placed", "restarted without some", "exited", "a debug line", "disk full", "loaded"}},
		{"a model, by model or among models, never by prefix or another attribute", EventFilter{Model: "resnet50"}, []string{"profiled resnet50", "restarted without some"}},
		{"a model first among models", EventFilter{Model: "bert"}, []string{"restarted without some", "a debug line"}},
		{"an underscore is no wildcard", EventFilter{Model: "aXb"}, nil},
		{"everything at once", EventFilter{Kinds: []string{"executor_restart", "profile_job"}, MinSeverity: SeverityInfo, Model: "bert"}, []string{"restarted without some"}},
		{"from a moment on, that moment's included", EventFilter{After: filterT0.Add(5 * time.Minute)}, []string{"a debug line", "disk full", "loaded"}},
		{"from a moment between two", EventFilter{After: filterT0.Add(6*time.Minute + time.Nanosecond)}, []string{"loaded"}},
		{"from a moment in another zone", EventFilter{After: filterT0.Add(6 * time.Minute).In(time.FixedZone("CET", 3600))}, []string{"disk full", "loaded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var matched []Event
			for _, e := range all {
				if tt.f.Match(e) {
					matched = append(matched, e)
				}
			}
			var msgs []string
			for _, e := range matched {
				msgs = append(msgs, e.Message)
			}
			require.Equal(t, tt.want, msgs, "Match")

			got, err := s.EventsMatching(ctx, 0, 0, tt.f)
			require.NoError(t, err)
			require.Equal(t, matched, got, "EventsMatching")

			if len(matched) < 2 {
				return
			}
			got, err = s.EventsMatching(ctx, matched[0].ID, 1, tt.f)
			require.NoError(t, err)
			require.Equal(t, matched[1:2], got, "EventsMatching after the first, one")
			got, err = s.LatestEventsMatching(ctx, 1, tt.f)
			require.NoError(t, err)
			require.Equal(t, matched[len(matched)-1:], got, "LatestEventsMatching, the newest")
			got, err = s.LatestEventsMatching(ctx, 0, tt.f)
			require.NoError(t, err)
			require.Equal(t, matched, got, "LatestEventsMatching, all")
		})
	}
}

func TestParseSeverity(t *testing.T) {
	for _, s := range []Severity{SeverityDebug, SeverityInfo, SeverityWarning, SeverityError} {
		got, err := ParseSeverity(string(s))
		require.NoError(t, err)
		require.Equal(t, s, got)
	}
	_, err := ParseSeverity("warn")
	require.EqualError(t, err, `unknown severity "warn": one of debug, info, warning, error`)
}
