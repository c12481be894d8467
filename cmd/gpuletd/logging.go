package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/gpulet/gpuletd/daemon/config"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"
)

// newLogger builds the process's one logger: with format auto, lines for
// the journal when w is systemd's journal stream (journalLogger),
// human-readable console output on a terminal, JSON otherwise.
func newLogger(c config.Log, w io.Writer) (*zap.Logger, error) {
	log, _, err := newLeveledLogger(c, w)
	return log, err
}

// newLeveledLogger is newLogger with the level handle, which a reload may
// change.
func newLeveledLogger(c config.Log, w io.Writer) (*zap.Logger, zap.AtomicLevel, error) {
	lvl, err := zapcore.ParseLevel(c.Level)
	if err != nil {
		return nil, zap.AtomicLevel{}, fmt.Errorf("parse log level %q: %w", c.Level, err)
	}
	level := zap.NewAtomicLevelAt(lvl)
	format := c.Format
	if format == "auto" {
		format = "json"
		switch f, ok := w.(*os.File); {
		case ok && toJournal(f, os.Getenv("JOURNAL_STREAM")):
			format = "journal"
		case ok && term.IsTerminal(int(f.Fd())):
			format = "console"
		}
	}
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	switch format {
	case "json":
		enc = zapcore.NewJSONEncoder(encCfg)
	case "console":
		encCfg.EncodeLevel = zapcore.CapitalColorLevelEncoder
		enc = zapcore.NewConsoleEncoder(encCfg)
	case "journal":
		// The journal stamps each line and reads its priority from a
		// "<N>" before it: journalctl -p warning then picks warnings
		// and errors, as it does for any service's.
		encCfg.TimeKey, encCfg.CallerKey = "", ""
		encCfg.EncodeLevel = journalLevel
		enc = zapcore.NewConsoleEncoder(encCfg)
	default:
		return nil, zap.AtomicLevel{}, fmt.Errorf("parse log format %q: use %s", c.Format, strings.Join(config.LogFormats, ", "))
	}
	core := zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), level)
	return zap.New(core, zap.AddCaller()), level, nil
}

// toJournal says whether f is the stream systemd connected to the journal:
// JOURNAL_STREAM names its device and inode ("dev:ino"). A child whose
// stderr is a pipe of its parent's inherits the variable but not the
// stream.
func toJournal(f *os.File, stream string) bool {
	dev, ino, ok := strings.Cut(stream, ":")
	if !ok {
		return false
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return false
	}
	return dev == strconv.FormatUint(uint64(st.Dev), 10) && ino == strconv.FormatUint(st.Ino, 10)
}

// journalLevel writes a level as the journal reads a line's priority,
// syslog's number in angle brackets, then its name: <4>warn.
func journalLevel(l zapcore.Level, enc zapcore.PrimitiveArrayEncoder) {
	prio := 2 // dpanic, panic, fatal: crit
	switch l {
	case zapcore.DebugLevel:
		prio = 7
	case zapcore.InfoLevel:
		prio = 6
	case zapcore.WarnLevel:
		prio = 4
	case zapcore.ErrorLevel:
		prio = 3
	}
	enc.AppendString("<" + strconv.Itoa(prio) + ">" + l.String())
}
