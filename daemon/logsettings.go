package daemon

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Triton's logging extension reads and changes the log settings while the
// daemon runs (GET and POST /v2/logging, gRPC LogSettings). gpuletd logs by
// level, so the settings describe the log level: log_verbose_level above 0
// is debug, then log_info, log_warning and log_error say which of the
// other levels are written. A change lasts until the daemon restarts or a
// reload changes log.level.

// The logging extension's settings.
const (
	logFile    = "log_file"
	logInfo    = "log_info"
	logWarning = "log_warning"
	logError   = "log_error"
	logVerbose = "log_verbose_level"
	logFormat  = "log_format"
)

// errLogSetting is a log setting gpuletd cannot take.
var errLogSetting = errors.New("log setting refused")

// logSettings are the settings of one log level.
type logSettings struct {
	info, warning, errors bool
	verbose               uint32
}

// settingsOf describes a log level.
func settingsOf(l zapcore.Level) logSettings {
	s := logSettings{info: l <= zapcore.InfoLevel, warning: l <= zapcore.WarnLevel, errors: l <= zapcore.ErrorLevel}
	if l <= zapcore.DebugLevel {
		s.verbose = 1
	}
	return s
}

// level is the log level the settings describe; settings that no level
// describes (warnings off but information on) are refused.
func (s logSettings) level() (zapcore.Level, error) {
	want := []bool{s.verbose > 0, s.info, s.warning, s.errors}
	// A level writes its own messages and every more severe one: the
	// settings must be some falses, then trues.
	if i := slices.Index(want, true); i >= 0 && slices.Contains(want[i:], false) {
		return 0, fmt.Errorf("%w: gpuletd logs by level, and a level writes every more severe message: "+
			"with %s above 0 or %s on, %s and %s stay on", errLogSetting, logVerbose, logInfo, logWarning, logError)
	}
	switch {
	case s.verbose > 0:
		return zapcore.DebugLevel, nil
	case s.info:
		return zapcore.InfoLevel, nil
	case s.warning:
		return zapcore.WarnLevel, nil
	case s.errors:
		return zapcore.ErrorLevel, nil
	}
	return zapcore.DPanicLevel, nil // nothing an operator reads
}

// set takes one setting: a bool, a whole number or a string as the name
// asks (JSON numbers arrive as float64).
func (s *logSettings) set(name string, v any) error {
	flag := func(to *bool) error {
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("%w: %s must be true or false", errLogSetting, name)
		}
		*to = b
		return nil
	}
	switch name {
	case logInfo:
		return flag(&s.info)
	case logWarning:
		return flag(&s.warning)
	case logError:
		return flag(&s.errors)
	case logVerbose:
		switch n := v.(type) {
		case uint32:
			s.verbose = n
			return nil
		case float64:
			if n >= 0 && n <= 1<<31 && n == float64(uint32(n)) {
				s.verbose = uint32(n)
				return nil
			}
		}
		return fmt.Errorf("%w: %s must be a whole number from 0", errLogSetting, name)
	case logFile:
		if v == "" {
			return nil
		}
		return fmt.Errorf("%w: %s: gpuletd writes its log to standard error (the journal under systemd); only \"\" is taken", errLogSetting, name)
	case logFormat:
		if v == "default" {
			return nil
		}
		return fmt.Errorf("%w: %s: set log.format (GPULETD_LOG_FORMAT, json or console) in the configuration; only \"default\" is taken here", errLogSetting, name)
	}
	return fmt.Errorf("%w: %q is not a log setting; the settings are %s, %s, %s, %s, %s and %s",
		errLogSetting, name, logFile, logInfo, logWarning, logError, logVerbose, logFormat)
}

// values lists every setting as the extension answers them.
func (s logSettings) values() map[string]any {
	return map[string]any{logFile: "", logInfo: s.info, logWarning: s.warning, logError: s.errors,
		logVerbose: s.verbose, logFormat: "default"}
}

// updateLogSettings applies changes (none: only reads) to the daemon's log
// level, all or none of them, and returns the settings as they now are.
func (n *node) updateLogSettings(changes map[string]any) (map[string]any, *inferError) {
	if n.level == nil {
		return nil, &inferError{code: http.StatusInternalServerError, reason: reasonInternal, msg: "this daemon has no log level to set"}
	}
	s := settingsOf(n.level.Level())
	for _, name := range slices.Sorted(maps.Keys(changes)) {
		if err := s.set(name, changes[name]); err != nil {
			return nil, badRequest("%v", err)
		}
	}
	lvl, err := s.level()
	if err != nil {
		return nil, badRequest("%v", err)
	}
	if lvl != n.level.Level() {
		n.log.Info("log level changed through the logging extension", zap.Stringer("from", n.level.Level()), zap.Stringer("to", lvl))
		n.level.SetLevel(lvl)
	}
	return settingsOf(lvl).values(), nil
}

// handleLogSettings answers GET /v2/logging and POST /v2/logging.
func (n *node) handleLogSettings(w http.ResponseWriter, r *http.Request) {
	var changes map[string]any
	if r.Method == http.MethodPost {
		present, err := readJSONBody(r, maxParamsBody, &changes)
		if err == nil && !present {
			err = errors.New("the body is empty")
		}
		if err != nil {
			writeInferError(w, badRequest("log settings: %v; give the settings to change as a JSON object", err))
			return
		}
	}
	out, ierr := n.updateLogSettings(changes)
	if ierr != nil {
		writeInferError(w, ierr)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
