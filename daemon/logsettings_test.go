package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func TestLogSettings(t *testing.T) {
	for _, tc := range []struct {
		name    string
		from    zapcore.Level
		changes map[string]any
		want    zapcore.Level
		err     string
	}{
		{name: "read only", from: zapcore.InfoLevel, want: zapcore.InfoLevel},
		{name: "verbose", from: zapcore.InfoLevel, changes: map[string]any{logVerbose: float64(1)}, want: zapcore.DebugLevel},
		{name: "verbose over gRPC", from: zapcore.WarnLevel, changes: map[string]any{logVerbose: uint32(2), logInfo: true, logWarning: true}, want: zapcore.DebugLevel},
		{name: "back from verbose", from: zapcore.DebugLevel, changes: map[string]any{logVerbose: float64(0)}, want: zapcore.InfoLevel},
		{name: "info off", from: zapcore.InfoLevel, changes: map[string]any{logInfo: false}, want: zapcore.WarnLevel},
		{name: "errors only", from: zapcore.InfoLevel, changes: map[string]any{logInfo: false, logWarning: false}, want: zapcore.ErrorLevel},
		{name: "nothing", from: zapcore.InfoLevel, changes: map[string]any{logInfo: false, logWarning: false, logError: false}, want: zapcore.DPanicLevel},
		{name: "the defaults Triton reports", from: zapcore.InfoLevel, changes: map[string]any{logFile: "", logFormat: "default"}, want: zapcore.InfoLevel},
		{name: "a hole", from: zapcore.InfoLevel, changes: map[string]any{logWarning: false}, err: "gpuletd logs by level"},
		{name: "verbose without info", from: zapcore.WarnLevel, changes: map[string]any{logVerbose: float64(1)}, err: "gpuletd logs by level"},
		{name: "a file", from: zapcore.InfoLevel, changes: map[string]any{logFile: "/tmp/x.log"}, err: "standard error"},
		{name: "a format", from: zapcore.InfoLevel, changes: map[string]any{logFormat: "ISO8601"}, err: "log.format"},
		{name: "not a flag", from: zapcore.InfoLevel, changes: map[string]any{logInfo: "yes"}, err: "log_info must be true or false"},
		{name: "not a count", from: zapcore.InfoLevel, changes: map[string]any{logVerbose: float64(-1)}, err: "whole number"},
		{name: "unknown", from: zapcore.InfoLevel, changes: map[string]any{"log_level": float64(1)}, err: `"log_level" is not a log setting`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lvl := zap.NewAtomicLevelAt(tc.from)
			n := &node{level: &lvl, log: zap.NewNop()}
			got, ierr := n.updateLogSettings(tc.changes)
			if tc.err != "" {
				require.NotNil(t, ierr)
				require.Equal(t, 400, ierr.code)
				require.Contains(t, ierr.msg, tc.err)
				require.Equal(t, tc.from, lvl.Level(), "a refused change changes nothing")
				return
			}
			require.Nil(t, ierr)
			require.Equal(t, tc.want, lvl.Level())
			require.Equal(t, settingsOf(tc.want).values(), got)
			require.Len(t, got, 6)
		})
	}
}
