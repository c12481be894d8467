package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// badEventsRow writes an events row that breaks the table's CHECK
// constraints, as a faulty tool or a torn edit could.
func badEventsRow(t *testing.T, path string) {
	t.Helper()
	db := sql.OpenDB(newConnector(path, connWriter, time.Second, 0))
	defer db.Close()
	_, err := db.Exec("PRAGMA ignore_check_constraints = 1")
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO events (at, kind, severity, message) VALUES (1, 'x', 'fatal', 'bad row')`)
	require.NoError(t, err)
}

func TestBadEventsRowIsQuarantined(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuletd.db")
	s, err := Open(ctx, path)
	require.NoError(t, err)
	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "good"})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	badEventsRow(t, path)

	t.Run("read-only: left as it is, the store still opens", func(t *testing.T) {
		limitFileSize(t, 4096)
		s, err := Open(ctx, path, WithReadOnlyFallback())
		require.NoError(t, err)
		require.NoError(t, s.Close())
	})

	s, err = Open(ctx, path)
	require.NoError(t, err, "a bad row in a log table does not stop the store")
	defer func() { require.NoError(t, s.Close()) }()
	evs, err := s.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, "good", evs[0].Message)
	var msg string
	require.NoError(t, s.reader().QueryRowContext(ctx, "SELECT message FROM events_quarantine").Scan(&msg))
	require.Equal(t, "bad row", msg, "the bad row is kept where an operator can read it")
	problems, err := quickCheck(ctx, s.reader())
	require.NoError(t, err)
	require.Empty(t, problems)
}

func TestAcceptProblems(t *testing.T) {
	tests := []struct {
		name     string
		problems []string
		corrupt  bool
	}{
		{"sound", nil, false},
		{"bad events rows", []string{"CHECK constraint failed in events", "NULL value in events.kind"}, false},
		{"another table", []string{"CHECK constraint failed in latency_profiles"}, true},
		{"events and a broken page", []string{"CHECK constraint failed in events", "*** in database main ***\nPage 7: btreeInitPage() returns error code 11"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Store{log: zap.NewNop()}
			for _, repair := range []bool{true, false} {
				err := s.acceptProblems(tc.problems, repair)
				if tc.corrupt {
					require.ErrorIs(t, err, ErrCorrupt)
				} else {
					require.NoError(t, err)
				}
			}
		})
	}
}
