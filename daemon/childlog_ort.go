package daemon

import (
	"regexp"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// ONNX Runtime writes its own log to the executor's stderr, not as JSON:
// "2026-12-06 06:09:55.589 [W:onnxruntime:, graph.cc:123 Func] message",
// coloured with terminal escapes. The daemon logs such a line at its own
// level with its message and where it came from, without the escapes, so
// that a warning of the runtime's is a warning in the journal and not an
// info line full of control characters.

// terminalEscape is a terminal's control sequence (ESC [ … letter).
var terminalEscape = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]")

// ortLine is a line of ONNX Runtime's default log: time, severity letter,
// logger id, where, message.
var ortLine = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \[([VIWEF]):onnxruntime:[^,\]]*, ([^\]]*)\] (.*)$`)

// ortLevels are the levels of ONNX Runtime's severity letters; fatal is
// logged as error, as the executor's own fatal records are.
var ortLevels = map[string]zapcore.Level{
	"V": zapcore.DebugLevel, "I": zapcore.InfoLevel, "W": zapcore.WarnLevel, "E": zapcore.ErrorLevel, "F": zapcore.ErrorLevel,
}

// plainRecord reads a line of an executor's that is not JSON: one of ONNX
// Runtime's log, at its level with its source, or any other text at info,
// both without terminal escapes.
func plainRecord(b []byte) (zapcore.Level, string, []zap.Field) {
	text := terminalEscape.ReplaceAllString(string(b), "")
	m := ortLine.FindStringSubmatch(text)
	if m == nil {
		return zapcore.InfoLevel, text, nil
	}
	return ortLevels[m[1]], m[3], []zap.Field{zap.String("source", "onnxruntime"), zap.String("at", m[2])}
}
