package daemon

import (
	"bytes"
	"encoding/json"
	"sort"
	"sync"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/gpulet/gpuletd/internal/crashlog"
)

// childLog is the io.Writer an executor's stdout and stderr go to. The
// executor logs JSON lines; each is logged again through the daemon's logger
// at its own level with its own message and fields, so the daemon's log has
// one record per executor record instead of a JSON string inside a JSON
// string. Lines that are not JSON records (a crash's stack, a library's
// print) are logged whole at info level (error for stderr-like text is not
// guessed), but for ONNX Runtime's own log lines, which say their level
// (childlog_ort.go), and a Go crash report's headline (crashlog), logged
// at error level as the executor's last error.
type childLog struct {
	log *zap.Logger
	mu  sync.Mutex
	buf []byte
	// lastErr is the last record at error level or above: its error
	// field, else its message.
	lastErr string
}

// lastError is the last error the executor logged ("": none, or no
// childLog).
func (c *childLog) lastError() string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// maxChildLine bounds a line held while waiting for its end.
const maxChildLine = 64 << 10

func newChildLog(log *zap.Logger) *childLog { return &childLog{log: log} }

// Write logs every complete line of p and keeps the rest for the next call.
func (c *childLog) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(c.buf, p...)
	for {
		i := bytes.IndexByte(c.buf, '\n')
		if i < 0 {
			break
		}
		c.line(c.buf[:i])
		c.buf = c.buf[i+1:]
	}
	if len(c.buf) > maxChildLine {
		c.line(c.buf)
		c.buf = c.buf[:0]
	}
	if len(c.buf) == 0 {
		c.buf = nil // do not pin a large backing array
	}
	return len(p), nil
}

// Close logs what is left of an unterminated last line.
func (c *childLog) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.buf) > 0 {
		c.line(c.buf)
		c.buf = nil
	}
	return nil
}

// line logs one line.
func (c *childLog) line(b []byte) {
	b = bytes.TrimRight(b, "\r")
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	var rec map[string]any
	if b[0] != '{' || json.Unmarshal(b, &rec) != nil {
		lvl, msg, fields := plainRecord(b)
		if crashlog.IsHeadline(msg) { // what a crash report says the executor died of
			lvl = zapcore.ErrorLevel
		} else {
			c.lastErr = crashlog.Track(c.lastErr, msg) // where its signal arrived
		}
		c.emit(lvl, msg, msg, fields)
		return
	}
	msg, _ := rec["msg"].(string)
	lvl := zapcore.InfoLevel
	if s, ok := rec["level"].(string); ok {
		if l, err := zapcore.ParseLevel(s); err == nil {
			lvl = l
		}
	}
	keys := make([]string, 0, len(rec))
	for k := range rec {
		switch k {
		case "msg", "level", "ts", "caller":
		default:
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	fields := make([]zap.Field, 0, len(keys))
	for _, k := range keys {
		name := k
		if k == "logger" {
			name = "executor_logger"
		}
		fields = append(fields, zap.Any(name, rec[k]))
	}
	// Fatal and panic records of the child are logged at error: the child
	// has already ended; the daemon must not.
	if lvl > zapcore.ErrorLevel {
		lvl = zapcore.ErrorLevel
	}
	cause := msg
	if e, ok := rec["error"].(string); ok && e != "" {
		cause = e
	}
	c.emit(lvl, msg, cause, fields)
}

// emit logs a record of the executor's at lvl, keeping cause as its last
// error when it is one.
func (c *childLog) emit(lvl zapcore.Level, msg, cause string, fields []zap.Field) {
	if lvl == zapcore.ErrorLevel {
		c.lastErr = cause
	}
	if ce := c.log.Check(lvl, msg); ce != nil {
		ce.Write(fields...)
	}
}
