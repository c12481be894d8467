package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gpulet/gpuletd/internal/crashlog"
)

func TestChildLogRelogsExecutorRecords(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	w := newChildLog(zap.New(core))
	in := `{"level":"warn","ts":1,"logger":"executor","caller":"x.go:1","msg":"recalibrate","model":"m","factor":1.5}` + "\n" +
		"panic: boom\n" +
		`{"level":"fatal","msg":"cannot start"}` + "\n" +
		"\n" +
		`{"level":"info","msg":"split` // an unterminated line, written in two parts
	_, err := w.Write([]byte(in))
	require.NoError(t, err)
	_, err = w.Write([]byte(` line"}` + "\n" + "tail without newline"))
	require.NoError(t, err)
	require.NoError(t, w.Close())

	got := logs.AllUntimed()
	require.Len(t, got, 5)
	require.Equal(t, zapcore.WarnLevel, got[0].Level)
	require.Equal(t, "recalibrate", got[0].Message)
	require.Equal(t, map[string]any{"executor_logger": "executor", "model": "m", "factor": 1.5}, got[0].ContextMap())
	require.Equal(t, zapcore.ErrorLevel, got[1].Level, "a crash report's headline")
	require.Equal(t, "panic: boom", got[1].Message)
	require.Equal(t, zapcore.ErrorLevel, got[2].Level, "a child's fatal record does not end the daemon")
	require.Equal(t, "cannot start", got[2].Message)
	require.Equal(t, "split line", got[3].Message)
	require.Equal(t, "tail without newline", got[4].Message)
}

// The last error record is kept for the executor's restart event: its
// error field, else its message; records below error level leave it.
func TestChildLogKeepsTheLastError(t *testing.T) {
	w := newChildLog(zap.NewNop())
	require.Empty(t, w.lastError())
	for _, tc := range []struct{ line, want string }{
		{`{"level":"error","msg":"batch done"}`, "batch done"},
		{`{"level":"error","msg":"device fault","error":"cudaErrorIllegalAddress (CUDA error 700)"}`, "cudaErrorIllegalAddress (CUDA error 700)"},
		{`{"level":"warn","msg":"recalibrate","error":"later"}`, "cudaErrorIllegalAddress (CUDA error 700)"},
		{"PC=0x47e520 m=0 sigcode=1 addr=0x0", "cudaErrorIllegalAddress (CUDA error 700)"},
		{"signal arrived during cgo execution", "cudaErrorIllegalAddress (CUDA error 700)"},
		// A crash report's headline, and where its signal arrived.
		{"SIGSEGV: segmentation violation", "SIGSEGV: segmentation violation"},
		{"PC=0x47e520 m=0 sigcode=1 addr=0x0", "SIGSEGV: segmentation violation"},
		{"signal arrived during cgo execution", "SIGSEGV: segmentation violation" + crashlog.InC},
		{"rax    0x0", "SIGSEGV: segmentation violation" + crashlog.InC},
		{`{"level":"fatal","msg":"cannot start"}`, "cannot start"},
		{"panic: runtime error: invalid memory address or nil pointer dereference", "panic: runtime error: invalid memory address or nil pointer dereference"},
	} {
		_, err := w.Write([]byte(tc.line + "\n"))
		require.NoError(t, err)
		require.Equal(t, tc.want, w.lastError(), tc.line)
	}
	require.Empty(t, (*childLog)(nil).lastError())
}

// ONNX Runtime's own log lines are logged at their level, with their
// message and source, without terminal escapes; an error among them is the
// executor's last error. Other text loses its escapes too.
func TestChildLogReadsOnnxRuntimeLines(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	w := newChildLog(zap.New(core))
	in := "\x1b[0;93m2026-12-06 06:09:55.589691318 [W:onnxruntime:, session_state.cc:1280 VerifyEachNodeIsAssignedToAnEp] Some nodes were not assigned to the preferred execution providers\x1b[m\n" +
		"\x1b[1;31m2026-12-06 06:09:55.590069426 [E:onnxruntime:, sequential_executor.cc:671 ExecuteKernel] Non-zero status code returned while running Gather node.\x1b[m\n" +
		"2026-12-06 06:09:56.000000001 [I:onnxruntime:gpuletd, inference_session.cc:500 Init] Initializing session.\n" +
		"\x1b[1mplain\x1b[0m text\n"
	_, err := w.Write([]byte(in))
	require.NoError(t, err)
	got := logs.AllUntimed()
	require.Len(t, got, 4)
	require.Equal(t, zapcore.WarnLevel, got[0].Level)
	require.Equal(t, "Some nodes were not assigned to the preferred execution providers", got[0].Message)
	require.Equal(t, map[string]any{"source": "onnxruntime", "at": "session_state.cc:1280 VerifyEachNodeIsAssignedToAnEp"}, got[0].ContextMap())
	require.Equal(t, zapcore.ErrorLevel, got[1].Level)
	require.Equal(t, "Non-zero status code returned while running Gather node.", got[1].Message)
	require.Equal(t, zapcore.InfoLevel, got[2].Level)
	require.Equal(t, "Initializing session.", got[2].Message)
	require.Equal(t, zapcore.InfoLevel, got[3].Level)
	require.Equal(t, "plain text", got[3].Message)
	require.Equal(t, "Non-zero status code returned while running Gather node.", w.lastError())
}
