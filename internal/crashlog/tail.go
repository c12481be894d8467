package crashlog

import (
	"io"
	"sync"
)

// Tail keeps the last bytes a process writes to it (its standard error),
// and the headline of a crash report written (Watch), which a long report
// pushes out of the tail: what a caller says of a child that failed. It
// is safe for concurrent use.
type Tail struct {
	mu    sync.Mutex
	max   int
	b     []byte
	crash Watch
}

var _ io.Writer = (*Tail)(nil)

// NewTail keeps the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

// Write implements io.Writer; it never fails.
func (t *Tail) Write(p []byte) (int, error) {
	_, _ = t.crash.Write(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// Headline is the headline of the last crash report written, as Headline
// gives it; "" when none was.
func (t *Tail) Headline() string { return t.crash.Headline() }

// String is the tail, after the crash report's headline when the tail
// has lost it.
func (t *Tail) String() string {
	h := t.crash.Headline()
	t.mu.Lock()
	defer t.mu.Unlock()
	if h != "" && Headline(string(t.b)) == "" {
		return h + "\n…\n" + string(t.b)
	}
	return string(t.b)
}
