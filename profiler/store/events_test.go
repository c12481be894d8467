package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestEventsFeed(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, WithClock(newTestClock().Now))

	last, err := s.LastEventID(ctx)
	require.NoError(t, err)
	require.Zero(t, last)

	var appended []Event
	for i, kind := range []string{EventReorganize, EventExecutorRestart, EventProfileJob, EventConfigReload, EventReorganize} {
		e, err := s.AppendEvent(ctx, Event{Kind: kind, Message: kind, Attrs: map[string]string{"n": string(rune('a' + i))}})
		require.NoError(t, err)
		require.Equal(t, SeverityInfo, e.Severity, "severity defaults to info")
		appended = append(appended, e)
	}

	tests := []struct {
		name  string
		since int64
		limit int
		want  []Event
	}{
		{"from the start", 0, 0, appended},
		{"limited", 0, 2, appended[:2]},
		{"after an id", appended[1].ID, 2, appended[2:4]},
		{"caught up", appended[4].ID, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Events(ctx, tt.since, tt.limit)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}

	// A follower that pages with the last id it saw gets every event once.
	var seen []int64
	var since int64
	for {
		page, err := s.Events(ctx, since, 2)
		require.NoError(t, err)
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			seen = append(seen, e.ID)
		}
		since = page[len(page)-1].ID
	}
	require.Len(t, seen, 5)

	last, err = s.LastEventID(ctx)
	require.NoError(t, err)
	require.Equal(t, appended[4].ID, last)
}

func TestPruneEventsNeverReusesIDs(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []int64
	for i := range 3 {
		e, err := s.AppendEvent(ctx, Event{At: t0.Add(time.Duration(i) * time.Hour), Kind: EventReorganize, Severity: SeverityWarning})
		require.NoError(t, err)
		ids = append(ids, e.ID)
	}
	n, err := s.PruneEvents(ctx, t0.Add(90*time.Minute))
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	left, err := s.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, left, 1)
	require.Equal(t, ids[2], left[0].ID)

	n, err = s.PruneEvents(ctx, t0.Add(5*time.Hour))
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	e, err := s.AppendEvent(ctx, Event{Kind: EventReorganize})
	require.NoError(t, err)
	require.Greater(t, e.ID, ids[2], "a feed that saw id %d must see the next event", ids[2])
}

func TestAppendEventValidation(t *testing.T) {
	s := openTest(t)
	tests := []struct {
		name string
		e    Event
	}{
		{"no kind", Event{Message: "x"}},
		{"unknown severity", Event{Kind: EventReorganize, Severity: "fatal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.AppendEvent(context.Background(), tt.e)
			require.ErrorIs(t, err, ErrInvalid)
		})
	}
}

// LatestEvents is the end of the history, oldest first.
func TestLatestEvents(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	got, err := s.LatestEvents(ctx, 3)
	require.NoError(t, err)
	require.Empty(t, got)
	var ids []int64
	for range 5 {
		e, err := s.AppendEvent(ctx, Event{Kind: EventReorganize, Severity: SeverityInfo})
		require.NoError(t, err)
		ids = append(ids, e.ID)
	}
	tests := []struct {
		name  string
		limit int
		want  []int64
	}{
		{"the newest three", 3, ids[2:]},
		{"more than there are", 10, ids},
		{"no limit", 0, ids},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.LatestEvents(ctx, tt.limit)
			require.NoError(t, err)
			var gotIDs []int64
			for _, e := range got {
				gotIDs = append(gotIDs, e.ID)
			}
			require.Equal(t, tt.want, gotIDs)
		})
	}
}
