package main

import (
	"fmt"
	"io"
	"os"

	"github.com/gpulet/gpuletd/daemon/config"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"
)

// newLogger builds the process's one logger: JSON when w is not a terminal
// (or format is json), human-readable console output otherwise.
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
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
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
	default:
		return nil, zap.AtomicLevel{}, fmt.Errorf("parse log format %q: use auto, json or console", c.Format)
	}
	core := zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), level)
	return zap.New(core, zap.AddCaller()), level, nil
}
