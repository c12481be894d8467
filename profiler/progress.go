package profiler

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// ProgressBar shows a job's Progress: on a terminal one bar redrawn in
// place, otherwise one plain line per finished point. It is safe for
// concurrent use.
type ProgressBar struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	drawn    bool
}

// NewProgressBar writes to w; terminal selects the bar.
func NewProgressBar(w io.Writer, terminal bool) *ProgressBar {
	return &ProgressBar{w: w, terminal: terminal}
}

// barWidth is the number of cells of the bar.
const barWidth = 30

// Update shows p.
func (b *ProgressBar) Update(p Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	what := progressPoint(p)
	if !b.terminal {
		if p.Finished {
			fmt.Fprintf(b.w, "%s %d/%d: %s%s\n", p.Phase, p.Done, p.Total, what, progressResult(p))
		}
		return
	}
	filled := 0
	if p.Total > 0 {
		filled = min(barWidth, barWidth*p.Done/p.Total)
	}
	bar := strings.Repeat("█", filled) + strings.Repeat("·", barWidth-filled)
	samples := ""
	if p.Samples > 0 && !p.Finished {
		samples = fmt.Sprintf(", %d samples", p.Samples)
	}
	fmt.Fprintf(b.w, "\r\x1b[K%-5s [%s] %d/%d %s%s", p.Phase, bar, p.Done, p.Total, what, samples)
	b.drawn = true
}

// Close ends the bar's line, if one was drawn.
func (b *ProgressBar) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprintln(b.w)
		b.drawn = false
	}
}

func progressPoint(p Progress) string {
	switch {
	case p.Phase == "pairs":
		return fmt.Sprintf("p=%d%% b=%d beside p=%d%% b=%d", p.Size, p.Batch, p.SizeB, p.BatchB)
	case p.Size > 0:
		return fmt.Sprintf("p=%d%% b=%d", p.Size, p.Batch)
	}
	return "all points"
}

func progressResult(p Progress) string {
	if p.P50MS <= 0 {
		return ""
	}
	s := fmt.Sprintf(": p50 %.4g ms, %d samples", p.P50MS, p.Samples)
	if !p.Stable {
		s += " (capped)"
	}
	return s
}
