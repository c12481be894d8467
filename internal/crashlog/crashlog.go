// Package crashlog finds, in what a Go process wrote to its standard
// error, the headline of the crash it died of: the signal (SIGSEGV:
// segmentation violation), the runtime's fatal error or the panic, and
// whether the signal arrived in C code (in gpuletd's executors: ONNX
// Runtime, a provider, or a model's custom operator library). The rest of
// a crash report (the goroutines' stacks, the registers) says nothing an
// operator acts on, and its last lines are a register dump.
package crashlog

import (
	"regexp"
	"strings"
	"sync"
)

// InC is what Headline adds for a signal that arrived in C code.
const InC = " (in C code: ONNX Runtime or a library it loaded)"

// headline matches the first line of a Go crash report: a signal the
// runtime caught ("SIGSEGV: segmentation violation"), a fatal error of the
// runtime, or a panic no one recovered.
var headline = regexp.MustCompile(`^(?:SIG[A-Z0-9]+: .+|fatal error: .+|panic: .+|unexpected signal during runtime execution)$`)

// cgoSignal is the runtime's line saying the signal came in C code.
const cgoSignal = "signal arrived during cgo execution"

// IsHeadline reports whether line starts a Go crash report.
func IsHeadline(line string) bool { return headline.MatchString(strings.TrimSpace(line)) }

// InCgo reports whether line is the runtime's word that the signal arrived
// in C code.
func InCgo(line string) bool { return strings.TrimSpace(line) == cgoSignal }

// Track returns the headline of a crash report after line, given what it
// was before it, headline ("" for none): line when it starts a report, the
// headline with InC when line says the signal arrived in C code, else
// headline as it was. A headline that is not a report's (an error the
// process logged) is left as it is.
func Track(headline, line string) string {
	switch {
	case IsHeadline(line):
		return strings.TrimSpace(line)
	case InCgo(line) && IsHeadline(headline) && !strings.HasSuffix(headline, InC):
		return headline + InC
	}
	return headline
}

// Headline returns the headline of the last crash report in log, with InC
// when the report says the signal arrived in C code; "" when log holds
// none.
func Headline(log string) string {
	h := ""
	for line := range strings.SplitSeq(log, "\n") {
		h = Track(h, line)
	}
	return h
}

// Watch finds the headline of a crash report in what is written to it, a
// process's output, however long the report that follows it (a report
// with every goroutine's stack runs to tens of KiB, past the tail a caller
// keeps). The zero value is ready; it is safe for concurrent use.
type Watch struct {
	mu       sync.Mutex
	line     []byte // the line being written, its first maxLine bytes
	long     bool   // the line being written is longer than maxLine
	headline string
}

// maxLine bounds the part of a line Watch keeps: headlines are short.
const maxLine = 512

// Write implements io.Writer; it never fails.
func (w *Watch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range p {
		if c != '\n' {
			if len(w.line) < maxLine {
				w.line = append(w.line, c)
			} else {
				w.long = true
			}
			continue
		}
		if !w.long {
			w.headline = Track(w.headline, string(w.line))
		}
		w.line, w.long = w.line[:0], false
	}
	return len(p), nil
}

// Headline is the headline of the last crash report written, as Headline
// gives it; "" when none was.
func (w *Watch) Headline() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.headline
}
