package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestOpenCreatesDirectoryAndConfiguresConnections(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a", "b", "gpuletd.db")
	s, err := Open(ctx, path, WithBusyTimeout(1234*1e6))
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()

	require.FileExists(t, path)
	require.Equal(t, path, s.Path())

	tests := []struct {
		name   string
		db     *sql.DB
		pragma string
		want   string
	}{
		{"writer journal", s.w, "journal_mode", "wal"},
		{"writer foreign keys", s.w, "foreign_keys", "1"},
		{"writer busy timeout", s.w, "busy_timeout", "1234"},
		{"writer synchronous normal", s.w, "synchronous", "1"},
		{"writer writable", s.w, "query_only", "0"},
		{"reader journal", s.reader(), "journal_mode", "wal"},
		{"reader foreign keys", s.reader(), "foreign_keys", "1"},
		{"reader busy timeout", s.reader(), "busy_timeout", "1234"},
		{"reader query only", s.reader(), "query_only", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			require.NoError(t, tt.db.QueryRowContext(ctx, "PRAGMA "+tt.pragma).Scan(&got))
			require.Equal(t, tt.want, got)
		})
	}

	_, err = s.reader().ExecContext(ctx, "DELETE FROM events")
	require.Error(t, err, "the reader pool must refuse writes")
}

func TestOpenRejectsEmptyPath(t *testing.T) {
	_, err := Open(context.Background(), "")
	require.ErrorIs(t, err, ErrInvalid)
}

func TestReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuletd.db")
	s, err := Open(ctx, path)
	require.NoError(t, err)
	e, err := s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "reloaded"})
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s, err = Open(ctx, path)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	got, err := s.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, e.ID, got[0].ID)
	v, err := s.Version(ctx)
	require.NoError(t, err)
	require.Equal(t, SchemaVersion(), v)
}

// writeFilled makes a closed database at path with enough rows to span many
// pages and returns its page size.
func writeFilled(t *testing.T, path string) int {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, path)
	require.NoError(t, err)
	var pts []LatencyPoint
	for p := 1; p <= 100; p++ {
		for b := 1; b <= 20; b++ {
			pts = append(pts, LatencyPoint{ModelSHA: shaOf("m"), DeviceType: "cpu", Size: p, Batch: b, P50MS: float64(b), P99MS: float64(b) * 2, MeanMS: float64(b), Samples: 100, Complete: true})
		}
	}
	require.NoError(t, s.PutLatency(ctx, pts))
	var pageSize int
	require.NoError(t, s.reader().QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize))
	require.NoError(t, s.Close())
	require.NoFileExists(t, path+"-wal", "closing the last connection checkpoints the WAL")
	return pageSize
}

func TestOpenCorruptFile(t *testing.T) {
	tests := []struct {
		name    string
		corrupt func(t *testing.T, path string)
	}{
		{"not a database", func(t *testing.T, path string) {
			junk := make([]byte, 8192)
			for i := range junk {
				junk[i] = byte(i*7 + 3)
			}
			require.NoError(t, os.WriteFile(path, junk, 0o600))
		}},
		{"malformed pages", func(t *testing.T, path string) {
			pageSize := writeFilled(t, path)
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			require.NoError(t, err)
			defer f.Close()
			st, err := f.Stat()
			require.NoError(t, err)
			require.Greater(t, st.Size(), int64(8*pageSize))
			junk := make([]byte, pageSize)
			for i := range junk {
				junk[i] = 0xA5
			}
			// Keep page 1 (header and schema), garble pages 2..8.
			for pg := 1; pg < 8; pg++ {
				_, err := f.WriteAt(junk, int64(pg*pageSize))
				require.NoError(t, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gpuletd.db")
			tt.corrupt(t, path)
			before, err := os.ReadFile(path)
			require.NoError(t, err)

			s, err := Open(context.Background(), path)
			if s != nil {
				_ = s.Close()
			}
			require.ErrorIs(t, err, ErrCorrupt)
			require.Contains(t, err.Error(), path)
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, before, after, "a corrupt file must be left as it was")
		})
	}
}

func TestWrapClassifiesErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"no rows", sql.ErrNoRows, ErrNotFound},
		{"nil", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wrap("do thing", tt.err)
			if tt.want == nil {
				require.NoError(t, got)
				return
			}
			require.ErrorIs(t, got, tt.want)
			require.Contains(t, got.Error(), "do thing")
		})
	}
	require.False(t, errors.Is(wrap("x", errors.New("boom")), ErrNotFound))
}

func TestCancelledContext(t *testing.T) {
	s := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		call func() error
	}{
		{"write", func() error { _, err := s.AppendEvent(ctx, Event{Kind: EventReorganize}); return err }},
		{"read", func() error { _, err := s.Events(ctx, 0, 0); return err }},
		{"batch write", func() error {
			return s.PutLatency(ctx, []LatencyPoint{{ModelSHA: "m", DeviceType: "d", Size: 1, Batch: 1, P50MS: 1, P99MS: 1, MeanMS: 1, Complete: true}})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, tt.call(), context.Canceled)
		})
	}
	// The writer is left usable.
	_, err := s.AppendEvent(context.Background(), Event{Kind: EventReorganize})
	require.NoError(t, err)
}

func TestUseAfterClose(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "gpuletd.db"))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = s.AppendEvent(context.Background(), Event{Kind: EventReorganize})
	require.ErrorContains(t, err, "closed")
	_, err = s.Events(context.Background(), 0, 0)
	require.ErrorContains(t, err, "closed")
}

func TestRetryBusy(t *testing.T) {
	other := errors.New("boom")
	tests := []struct {
		name      string
		fails     []error // what the calls return, in order; nil after them
		busy      time.Duration
		wantErr   error
		wantCalls int
	}{
		{name: "busy twice, then open", fails: []error{ErrBusy, ErrBusy}, busy: time.Second, wantCalls: 3},
		{name: "another error is not retried", fails: []error{other}, busy: time.Second, wantErr: other, wantCalls: 1},
		{name: "busy past the timeout", fails: []error{ErrBusy, ErrBusy, ErrBusy, ErrBusy, ErrBusy, ErrBusy, ErrBusy, ErrBusy}, busy: 0, wantErr: ErrBusy, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := retryBusy(context.Background(), tt.busy, func() error {
				calls++
				if calls <= len(tt.fails) {
					return fmt.Errorf("connect: %w", tt.fails[calls-1])
				}
				return nil
			})
			if tt.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tt.wantErr)
			}
			require.Equal(t, tt.wantCalls, calls)
		})
	}
}
