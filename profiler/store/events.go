package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// Event kinds the daemon records. Kind is free text; these are the ones
// gpuletd itself writes.
const (
	EventReorganize      = "reorganize"
	EventExecutorRestart = "executor_restart"
	EventProfileJob      = "profile_job"
	EventConfigReload    = "config_reload"
)

// Severity grades an event.
type Severity string

// Event severities.
const (
	SeverityDebug   Severity = "debug"
	SeverityInfo    Severity = "info"
	SeverityWarning Severity = "warning"
	SeverityError   Severity = "error"
)

// Event is one entry of the daemon's history.
type Event struct {
	// ID is set by the store. IDs only grow and are never reused, so a feed
	// follows the history by asking for events after the last ID it saw.
	ID       int64
	At       time.Time
	Kind     string
	Severity Severity
	Message  string
	Attrs    map[string]string
}

// AppendEvent stores e (At defaults to now, Severity to info) and returns it
// as stored, with its ID.
func (s *Store) AppendEvent(ctx context.Context, e Event) (Event, error) {
	op := fmt.Sprintf("append %s event", e.Kind)
	if e.Severity == "" {
		e.Severity = SeverityInfo
	}
	switch {
	case e.Kind == "":
		return Event{}, wrap(op, invalid("event has no kind"))
	case e.Severity != SeverityDebug && e.Severity != SeverityInfo && e.Severity != SeverityWarning && e.Severity != SeverityError:
		return Event{}, wrap(op, invalid("unknown severity %q", e.Severity))
	}
	attrs := []byte("{}")
	if len(e.Attrs) > 0 {
		var err error
		if attrs, err = json.Marshal(e.Attrs); err != nil {
			return Event{}, wrap(op, err)
		}
	}
	e.At = s.stamp(e.At)
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO events (at, kind, severity, message, attrs) VALUES (?, ?, ?, ?, ?) RETURNING id`,
			ns(e.At), e.Kind, e.Severity, e.Message, string(attrs)).Scan(&e.ID)
	})
	if err != nil {
		return Event{}, err
	}
	return e, nil
}

// Events returns up to limit events with an ID above sinceID, oldest first.
// sinceID 0 starts at the beginning; limit ≤ 0 means no limit.
func (s *Store) Events(ctx context.Context, sinceID int64, limit int) ([]Event, error) {
	return s.EventsMatching(ctx, sinceID, limit, EventFilter{})
}

// LastEventID returns the ID of the newest event, or 0 when there is none, so
// a feed can start from now.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	var id int64
	err := s.reader().QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM events`).Scan(&id)
	return id, wrap("get last event id", err)
}

// PruneEvents deletes events older than before and returns how many it
// deleted. IDs of later events are not reused.
func (s *Store) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.write(ctx, "prune events", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE at < ?`, ns(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

func scanEvent(r *sql.Rows) (Event, error) {
	var e Event
	var at int64
	var attrs string
	if err := r.Scan(&e.ID, &at, &e.Kind, &e.Severity, &e.Message, &attrs); err != nil {
		return Event{}, err
	}
	e.At = fromNS(at)
	if attrs != "{}" {
		if err := json.Unmarshal([]byte(attrs), &e.Attrs); err != nil {
			return Event{}, fmt.Errorf("decode attributes of event %d: %w", e.ID, err)
		}
	}
	return e, nil
}

// LatestEvents returns the newest limit events (limit ≤ 0: all), oldest
// first: the end of the history, as a feed that starts now shows it.
func (s *Store) LatestEvents(ctx context.Context, limit int) ([]Event, error) {
	return s.LatestEventsMatching(ctx, limit, EventFilter{})
}
