package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"go.uber.org/zap"
)

// streamOf is f's JOURNAL_STREAM value, as systemd sets it for the stream
// it connects to the journal.
func streamOf(t *testing.T, f *os.File) string {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Fstat(int(f.Fd()), &st))
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}

// Under systemd (stderr is the journal stream JOURNAL_STREAM names), auto
// logs lines the journal reads a priority from, without a time of their
// own; a stream the variable does not name (a child's pipe) gets JSON.
func TestLogFormatFollowsTheJournal(t *testing.T) {
	dir := t.TempDir()
	open := func(name string) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		require.NoError(t, err)
		t.Cleanup(func() { _ = f.Close() })
		return f
	}
	journal, other := open("journal"), open("other")
	tests := []struct {
		name   string
		w      *os.File
		stream string
		format string
		want   []string // lines, warn then info
	}{
		{"the journal's stream", journal, "", "auto", []string{"<4>warn\tdaemon\tdisk nearly full\t{\"free\": \"2%\"}", "<6>info\tdaemon\tserving"}},
		{"another stream", other, "journal", "auto", nil},
		{"no variable", other, "none", "auto", nil},
		{"asked for", other, "none", "journal", []string{"<4>warn\tdaemon\tdisk nearly full\t{\"free\": \"2%\"}", "<6>info\tdaemon\tserving"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			switch tt.stream {
			case "":
				t.Setenv("JOURNAL_STREAM", streamOf(t, journal))
			case "journal":
				t.Setenv("JOURNAL_STREAM", streamOf(t, journal)) // names the other file
			default:
				t.Setenv("JOURNAL_STREAM", "")
			}
			require.NoError(t, tt.w.Truncate(0))
			_, err := tt.w.Seek(0, 0)
			require.NoError(t, err)
			log, err := newLogger(config.Log{Level: "info", Format: tt.format}, tt.w)
			require.NoError(t, err)
			log = log.Named("daemon")
			log.Warn("disk nearly full", zap.String("free", "2%"))
			log.Info("serving")
			log.Debug("not shown")
			b, err := os.ReadFile(tt.w.Name())
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			require.Len(t, lines, 2, string(b))
			if tt.want == nil {
				require.True(t, strings.HasPrefix(lines[0], `{"level":"warn"`), "JSON: %s", lines[0])
				return
			}
			require.Equal(t, tt.want, lines)
		})
	}
	_, err := newLogger(config.Log{Level: "info", Format: "syslog"}, other)
	require.EqualError(t, err, `parse log format "syslog": use auto, json, console, journal`)
}
