package control

import "time"

// OnsetSpan is how long a model's requests must have been arriving in a
// window, counted from its first, before Count takes the window's rate
// from that first request and the surge check judges it: a surge check's
// whole window. A load sent to a fresh daemon on emulated V100s
// (short-skew at 0.9 of its max, three and four runs) was re-planned two or
// three times with a whole second, three or four with half a second, whose
// counts vary by 40% more, for the same share of requests within the SLOs
// (99.41–99.58%).
const OnsetSpan = SurgeCheck

// Count counts one model's requests in a measuring window of the node (a
// Window: the period's or the short one's) and gives its rate when the
// window closes. The daemon and the simulator count with it alike.
//
// A model whose requests began inside the window (none came in the window
// before) is measured from its first request rather than from the
// window's opening. Counted over the whole window, a load that began 0.4 s
// into a second read as 60% of its rate, and the surge it raised planned
// it that short (the long-only mix on emulated V100s, its load started on
// a fresh daemon: the surge measured vgg19 at 27 req/s of the 39 sent, and
// its plan held until the period re-planned, 13 s later). So that a few
// requests just before a close read as no burst, that rate counts the
// requests after the first over the time since it, is taken only once
// they have arrived for OnsetSpan, and is never below the window's own
// count rate. A model whose requests began later than that in the window
// is not judged at this close (Close's judged), and is measured over the
// whole of the next window, which its requests then fill: a surge check's
// window is judged only once a load has filled one.
type Count struct {
	n     int64
	first time.Duration // the window's first request, when seen
	seen  bool          // a request came in this window
	busy  bool          // a request came in the window before this one
}

// Add counts a request that arrived at at, on the windows' clock.
func (c *Count) Add(at time.Duration) {
	if !c.seen {
		c.first, c.seen = at, true
	}
	c.n++
}

// Remove takes back a request Add counted that asked nothing of a gpu-let
// (a response-cache hit). One taken back after its window closed is taken
// from the next.
func (c *Count) Remove() { c.n-- }

// Requests is how many requests the window has counted so far.
func (c *Count) Requests() int64 { return c.n }

// Close closes the window at now, dt seconds (above zero) after it opened
// (Window.Close's), and starts the next: it returns the model's rate over
// the window, requests/s, and whether the model's requests filled enough of
// it to judge a surge on (false only for one whose requests began less
// than OnsetSpan before now).
func (c *Count) Close(now time.Duration, dt float64) (rate float64, judged bool) {
	rate, judged = c.Peek(now, dt)
	c.busy = c.seen
	c.n, c.seen = min(c.n, 0), false
	return rate, judged
}

// Peek is what Close would return at now, dt seconds into the window,
// leaving the window open; a rate of 0 when dt is not above zero.
func (c *Count) Peek(now time.Duration, dt float64) (rate float64, judged bool) {
	if dt <= 0 {
		return 0, false
	}
	n := max(c.n, 0)
	rate, judged = float64(n)/dt, true
	if c.seen && !c.busy {
		if span := now - c.first; span < OnsetSpan {
			judged = false
		} else {
			rate = max(rate, float64(n-1)/span.Seconds())
		}
	}
	return rate, judged
}
