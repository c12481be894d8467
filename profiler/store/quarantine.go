package store

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"

	"go.uber.org/zap"
)

// eventsProblem matches the quick_check complaints about rows of the events
// table that break its constraints: a log table, so such rows are set aside
// rather than stopping the daemon.
var eventsProblem = regexp.MustCompile(`^(CHECK constraint failed in events|NULL value in events\.\w+)$`)

// eventsSound is the events table's constraints (0001_base_schema.sql) as
// one condition on a row.
const eventsSound = `COALESCE(at IS NOT NULL AND kind IS NOT NULL AND kind <> '' AND
	severity IN ('debug', 'info', 'warning', 'error') AND message IS NOT NULL AND
	attrs IS NOT NULL AND json_valid(attrs), 0)`

// acceptProblems decides whether quick_check's complaints stop the store:
// any complaint outside the events table is corruption; bad events rows are
// accepted (repair says whether they will be quarantined now).
func (s *Store) acceptProblems(problems []string, repair bool) error {
	if len(problems) == 0 {
		return nil
	}
	if err := corruption(problems); err != nil {
		return fmt.Errorf("check database: %w", err)
	}
	if !repair {
		s.log.Warn("the events table has rows that break its constraints; they are left as they are until the database can be written",
			zap.Strings("problems", problems))
	}
	return nil
}

// corruption is ErrCorrupt with quick_check's complaints when any of them
// is outside the events table, nil when there are none or all are bad
// events rows (which Open quarantines).
func corruption(problems []string) error {
	for _, p := range problems {
		if !eventsProblem.MatchString(p) {
			return fmt.Errorf("%w: %s", ErrCorrupt, strings.Join(problems, "; "))
		}
	}
	return nil
}

// quarantineEvents moves the events rows that break the table's constraints
// into events_quarantine, where an operator can read them, and says so.
func (s *Store) quarantineEvents(ctx context.Context, w *sql.DB) error {
	var moved int64
	err := s.runWrite(ctx, w, "quarantine bad events", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS events_quarantine (
			id INTEGER, at INTEGER, kind TEXT, severity TEXT, message TEXT, attrs TEXT,
			quarantined_at INTEGER NOT NULL)`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO events_quarantine
			SELECT id, at, kind, severity, message, attrs, ? FROM events WHERE NOT `+eventsSound, s.now().UnixMilli()); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE NOT `+eventsSound)
		if err != nil {
			return err
		}
		moved, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return err
	}
	s.log.Warn("moved events rows that break the table's constraints to events_quarantine; read them with sqlite3 and drop the table when done",
		zap.Int64("rows", moved), zap.String("inspect", fmt.Sprintf("sqlite3 %s 'SELECT * FROM events_quarantine'", s.path)))
	return nil
}
